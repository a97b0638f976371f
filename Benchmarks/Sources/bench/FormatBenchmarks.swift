import CBaseline
import Foundation
import WebImage
import WebImageAVIF
import WebImageWebP

/// WebP, GIF and AVIF: decode and encode against bare C loops over the same libraries (what dwebp,
/// cwebp, avifdec and avifenc do around their file I/O), a WebP thumbnail against vipsthumbnail, and
/// the peak memory of decoding the 380-frame GIF against its frames' bytes.
enum FormatBenchmarks {
    static let shared = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")

    static func file(_ path: String) -> Data {
        let url = shared.appendingPathComponent(path)
        guard let data = try? Data(contentsOf: url) else { fail("missing corpus file \(url.path)") }
        return data
    }

    static func run(iterations: Int) throws -> [Row] {
        var rows: [Row] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 11200 * 2200 * 4, alignment: 64)
        defer { buffer.deallocate() }
        let webp = WebPCoder()

        // The 20.4 MP photo, decoded once: the encode input, and (fitted to 1200 px) a typical web photo.
        let photo = try JPEGCoder().decode(file("large/lomiri/Kleiber_by_Lukas_Baubkus.jpg"))
        let webPhoto = try photo.fitted(to: DecodeOptions(thumbnailPixelSize: PixelSize(width: 1200, height: 1200)))
        let typicalWebP = try webp.encode(webPhoto, as: .webp, options: EncodeOptions(compressionQuality: 0.8))

        let webPSamples = [("24 MP WebP (bryce.webp, 11158x2156)", file("large/libwebp-test-data/bryce.webp")),
                           ("\(typicalWebP.count / 1000) KB WebP photo, 1200x675", typicalWebP)]
        for (name, data) in webPSamples {
            let image = try webp.decode(data)
            let (ours, reference) = data.withUnsafeBytes { bytes in
                Measure.interleaved(iterations: iterations) {
                    _ = try? webp.decode(data)
                } reference: {
                    var width: Int32 = 0, height: Int32 = 0
                    if baseline_decode_webp(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, buffer.baseAddress,
                                            buffer.count, &width, &height) != 0 { fail("the C loop could not decode \(name)") }
                }
            }
            rows.append(Row(name: "decode \(name)", ours: ours, reference: "C loop, libwebp (dwebp's decode)", referenceValue: reference,
                            megapixels: Double(image.width * image.height) / 1e6, goal: 0.95))
        }

        // The 380-frame GIF: every frame composited and copied out, both sides.
        let gif = file("gif/valid/wuffs/gifplayer-muybridge.gif")
        let animation = try GIFCoder().decode(gif)
        let frameBytes = animation.frames.count * animation.width * animation.height * 4
        let frames = UnsafeMutableRawBufferPointer.allocate(byteCount: animation.frames.count * MemoryLayout<UnsafeRawPointer>.size,
                                                            alignment: 64)
        defer { frames.deallocate() }
        let (gifOurs, gifReference) = gif.withUnsafeBytes { bytes in
            Measure.interleaved(iterations: max(3, iterations / 3)) {
                _ = try? GIFCoder().decode(gif)
            } reference: {
                let count = baseline_decode_gif(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count,
                                                frames.baseAddress, frames.count)
                if count != Int32(animation.frames.count) { fail("the giflib loop decoded \(count) frames") }
            }
        }
        rows.append(Row(name: "decode \(animation.frames.count)-frame GIF \(animation.width)x\(animation.height) (muybridge), all frames",
                        ours: gifOurs, reference: "C loop, giflib row by row", referenceValue: gifReference, goal: 0.95))
        rows.append(try gifMemoryRow(frameBytes: frameBytes))

        // AVIF: two typical photos.
        for path in ["avif/valid/av1-avif/Link-U/fox.profile0.8bpc.yuv420.avif", "avif/valid/av1-avif/Link-U/kimono.avif"] {
            let data = file(path)
            let image = try AVIFCoder().decode(data)
            let (ours, reference) = data.withUnsafeBytes { bytes in
                Measure.interleaved(iterations: iterations) {
                    _ = try? AVIFCoder().decode(data)
                } reference: {
                    var width: Int32 = 0, height: Int32 = 0
                    if baseline_decode_avif(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, buffer.baseAddress,
                                            buffer.count, &width, &height) != 0 { fail("the C loop could not decode \(path)") }
                }
            }
            rows.append(Row(name: "decode AVIF \((path as NSString).lastPathComponent) \(image.width)x\(image.height)", ours: ours,
                            reference: "C loop, libavif (avifdec's decode)", referenceValue: reference,
                            megapixels: Double(image.width * image.height) / 1e6, goal: 0.95))
        }

        // Encodes: the 20.4 MP photo as WebP q80 (cwebp's defaults: method 4); the 1200 px photo as AVIF
        // at speed 6, quality 0.8 (quantizer 13), one thread both sides.
        let encodeIterations = max(3, iterations / 5)
        let rgb = photo.pixelFormat == .rgb8 ? photo : try photo.converted(to: .rgb8)
        let (webPOurs, webPReference) = rgb.withUnsafePixels { pixels in
            Measure.interleaved(iterations: encodeIterations) {
                _ = try? webp.encode(rgb, as: .webp, options: EncodeOptions(compressionQuality: 0.8))
            } reference: {
                if baseline_encode_webp(pixels.bindMemory(to: UInt8.self).baseAddress, Int32(rgb.width), Int32(rgb.height),
                                        Int32(rgb.bytesPerRow), 80, 4) == 0 { fail("the libwebp loop failed") }
            }
        }
        rows.append(Row(name: "encode the 20.4 MP photo as WebP q80", ours: webPOurs, reference: "C loop, libwebp (cwebp -q 80)",
                        referenceValue: webPReference, megapixels: Double(rgb.width * rgb.height) / 1e6, goal: 0.95))
        let small = webPhoto.pixelFormat == .rgb8 ? webPhoto : try webPhoto.converted(to: .rgb8)
        let (avifOurs, avifReference) = small.withUnsafePixels { pixels in
            Measure.interleaved(iterations: encodeIterations) {
                _ = try? AVIFCoder().encode(small, as: .avif, options: EncodeOptions(compressionQuality: 0.8))
            } reference: {
                if baseline_encode_avif(pixels.bindMemory(to: UInt8.self).baseAddress, Int32(small.width), Int32(small.height),
                                        Int32(small.bytesPerRow), 6, 13) == 0 { fail("the libavif loop failed") }
            }
        }
        rows.append(Row(name: "encode a 1200x675 photo as AVIF, speed 6, quality 0.8", ours: avifOurs,
                        reference: "C loop, libavif + aom (avifenc -s 6)", referenceValue: avifReference,
                        megapixels: Double(small.width * small.height) / 1e6, goal: 0.95))

        rows.append(try thumbnailRow(iterations: iterations))
        return rows
    }

    /// `webimage decode --thumbnail 256` of the 24 MP WebP against `vipsthumbnail -s 256`, both writing PNG.
    static func thumbnailRow(iterations: Int) throws -> Row {
        let tool = ProcessInfo.processInfo.environment["WEBIMAGE_BIN"] ?? packageRoot.appendingPathComponent(".build/release/webimage").path
        let source = shared.appendingPathComponent("large/libwebp-test-data/bryce.webp").path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-webp-\(getpid())")
        try? FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            fail("\(tool) is missing: run `swift build -c release --product webimage` in the package root")
        }
        let ours = try Measure.process(tool, ["decode", "--thumbnail", "256", "--out", out.path, source], iterations: iterations)
        let vips = Measure.which("vipsthumbnail")
        let reference = try vips.map { try Measure.process($0, ["-s", "256", "-o", out.path + "/%s-vips.png", source], iterations: iterations) }
        return Row(name: "webimage decode --thumbnail 256 of the 24 MP WebP, whole process", ours: ours,
                   reference: "vipsthumbnail -s 256 (png)", referenceValue: reference, goal: 1.5,
                   note: "apt-get install libvips-tools")
    }

    /// Runs `bench gif-rss-child` in a fresh process: its peak RSS while decoding the 380-frame GIF.
    static func gifMemoryRow(frameBytes: Int) throws -> Row {
        let (status, output) = try Measure.run(CommandLine.arguments[0], ["gif-rss-child"])
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("peak") }) else {
            throw BenchError("gif-rss-child failed: \(output)")
        }
        let fields = line.split(separator: " ").compactMap { Double($0) }
        guard fields.count == 2 else { throw BenchError("gif-rss-child printed \(line)") }
        let frames = Double(frameBytes) / 1_048_576
        return Row(name: String(format: "peak RSS decoding the 380-frame GIF: %.0f MB over the %.0f MB before it", fields[0] - fields[1], fields[1]),
                   ours: fields[0] - fields[1], reference: "its frames' RGBA bytes", referenceValue: frames, goal: nil,
                   note: "ratio = frame bytes / growth", unit: "MB")
    }

    /// The child: decodes the GIF once, then prints its peak RSS after and before, in MB.
    static func gifRSSChild() throws {
        let data = file("gif/valid/wuffs/gifplayer-muybridge.gif")
        let before = ManagerBenchmarks.peakRSSMegabytes()
        let image = try GIFCoder().decode(data)
        withExtendedLifetime(image) {
            print(String(format: "peak %.1f %.1f", ManagerBenchmarks.peakRSSMegabytes(), before))
        }
    }
}
