import CBaseline
import Foundation
import WebImage

/// Decode and thumbnail benchmarks against a bare C loop over the same libraries, tjbench and vipsthumbnail.
enum CodecBenchmarks {
    static let samples = [
        Sample(name: "20.4 MP photo, JPEG 4:2:2", path: "lomiri/Kleiber_by_Lukas_Baubkus.jpg", format: .jpeg),
        Sample(name: "5120x2880 JPEG 4:2:0", path: "plasma/Flow/contents/images_dark/5120x2880.jpg", format: .jpeg),
        Sample(name: "5120x2880 progressive JPEG 4:4:4, 120 scans", path: "plasma/Volna/contents/images/5120x2880.jpg", format: .jpeg),
        Sample(name: "5120x2880 PNG", path: "plasma/MilkyWay/contents/images/5120x2880.png", format: .png),
    ]

    static func run(iterations: Int) throws -> [Row] {
        var rows: [Row] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 6100 * 3400 * 4, alignment: 64)
        defer { buffer.deallocate() }
        for sample in samples {
            let url = corpus.appendingPathComponent(sample.path)
            guard let data = try? Data(contentsOf: url) else { fail("missing corpus file \(url.path)") }
            let image: Image
            do { image = try CoderRegistry.shared.decode(data) } catch { fail("\(sample.name): \(error)") }
            let megapixels = Double(image.width * image.height) / 1e6

            let (ours, reference) = data.withUnsafeBytes { bytes in
                Measure.interleaved(iterations: iterations) {
                    _ = try? CoderRegistry.shared.decode(data)
                } reference: {
                    var width: Int32 = 0, height: Int32 = 0, channels: Int32 = 0
                    let base = bytes.bindMemory(to: UInt8.self).baseAddress
                    let status = sample.format == .jpeg
                        ? baseline_decode_jpeg(base, bytes.count, 1, buffer.baseAddress, buffer.count, &width, &height)
                        : baseline_decode_png(base, bytes.count, buffer.baseAddress, buffer.count, &width, &height, &channels)
                    if status != 0 { fail("the C baseline could not decode \(sample.path)") }
                }
            }
            rows.append(Row(name: "decode \(sample.name)", ours: ours, reference: "C loop, same library",
                            referenceValue: reference, megapixels: megapixels, goal: 0.95))

            if sample.format == .jpeg, let tjbench = Measure.which("tjbench") {
                // tjbench prints "Throughput: N Megapixels/sec" for its decompression of the file.
                if let run = try? Measure.run(tjbench, [url.path, "-rgb", "-benchtime", "2", "-warmup", "1"]),
                   let line = run.output.split(separator: "\n").first(where: { $0.contains("Throughput") }),
                   let value = line.split(separator: " ").compactMap({ Double($0) }).first {
                    rows.append(Row(name: "decode \(sample.name)", ours: ours, reference: "tjbench -rgb",
                                    referenceValue: megapixels / value * 1000, megapixels: megapixels, goal: 0.95))
                }
            } else if sample.format == .jpeg {
                rows.append(Row(name: "decode \(sample.name)", ours: ours, reference: "tjbench", referenceValue: nil,
                                megapixels: megapixels, note: "apt-get install libjpeg-turbo-progs"))
            }
        }

        // Thumbnails of the 20.4 MP photo to fit 512 px.
        let photo = corpus.appendingPathComponent(samples[0].path)
        guard let photoData = try? Data(contentsOf: photo) else { fail("missing \(photo.path)") }
        let thumbnailOptions = DecodeOptions(thumbnailPixelSize: PixelSize(width: 512, height: 512))
        let (inProcess, dctOnly) = photoData.withUnsafeBytes { bytes in
            Measure.interleaved(iterations: iterations) {
                _ = try? CoderRegistry.shared.decode(photoData, options: thumbnailOptions)
            } reference: {
                var width: Int32 = 0, height: Int32 = 0
                _ = baseline_decode_jpeg(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, 8, buffer.baseAddress, buffer.count, &width, &height)
            }
        }
        rows.append(Row(name: "thumbnail 512 of the 20.4 MP photo, in process", ours: inProcess,
                        reference: "C loop, 1/8 DCT decode only", referenceValue: dctOnly, goal: nil))

        let tool = ProcessInfo.processInfo.environment["WEBIMAGE_BIN"] ?? packageRoot.appendingPathComponent(".build/release/webimage").path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }
        if !FileManager.default.isExecutableFile(atPath: tool) {
            FileHandle.standardError.write(Data("bench: \(tool) is missing: run `swift build -c release --product webimage` in the package root\n".utf8))
        } else {
            let vips = Measure.which("vipsthumbnail")
            let vipsTime = try? vips.map { try Measure.process($0, ["-s", "512", "-o", out.path + "/%s-vips.jpg", photo.path], iterations: iterations) }
            for format in ["png", "jpeg"] {
                let ours = try Measure.process(tool, ["decode", "--thumbnail", "512", "--format", format, "--out", out.path, photo.path],
                                               iterations: iterations)
                rows.append(Row(name: "webimage decode --thumbnail 512 --format \(format), whole process", ours: ours,
                                reference: "vipsthumbnail -s 512 (jpeg)", referenceValue: vipsTime ?? nil, goal: 1.5,
                                note: "apt-get install libvips-tools"))
            }
            // The deployment build: `swift build -c release --static-swift-stdlib` (run-all.sh makes it).
            // Half of a run's start-up was the dynamic loader resolving symbols across 88 libraries.
            let deployed = ProcessInfo.processInfo.environment["WEBIMAGE_STATIC_BIN"]
                ?? packageRoot.appendingPathComponent(".build/static/release/webimage").path
            if FileManager.default.isExecutableFile(atPath: deployed) {
                let ours = try Measure.process(deployed, ["decode", "--thumbnail", "512", "--format", "jpeg", "--out", out.path, photo.path],
                                               iterations: iterations)
                rows.append(Row(name: "the same (jpeg), built with --static-swift-stdlib as deployed", ours: ours,
                                reference: "vipsthumbnail -s 512 (jpeg)", referenceValue: vipsTime ?? nil, goal: 1.5,
                                note: "apt-get install libvips-tools"))
            } else {
                FileHandle.standardError.write(Data(("bench: \(deployed) is missing: swift build -c release --product webimage "
                                                     + "--static-swift-stdlib --scratch-path .build/static\n").utf8))
            }
        }
        return rows
    }
}

struct Sample {
    var name: String
    var path: String
    var format: ImageFormat
}

