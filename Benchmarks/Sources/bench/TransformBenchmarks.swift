import Foundation
import WebImage

/// Resizing the 20.4 MP photo to 256 px and blurring a 1080p picture, against libvips
/// (`vipsthumbnail`, `vips resize`, `vips gaussblur`) in the same run.
enum TransformBenchmarks {
    static func run(iterations: Int) throws -> [Row] {
        let photo = corpus.appendingPathComponent(CodecBenchmarks.samples[0].path)
        guard let photoData = try? Data(contentsOf: photo) else { fail("missing \(photo.path)") }
        let full = try CoderRegistry.shared.decode(photoData)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-transform-bench-\(getpid())")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: out) }

        // A 1080p picture to blur, made from the photo with our own resize and JPEG encoder.
        let picture = try ResizingTransformer(size: PixelSize(width: 1920, height: 1080), scaleMode: .aspectFill)
            .transform(full, forKey: "")
        let pictureFile = out.appendingPathComponent("picture-1080p.jpg")
        try CoderRegistry.shared.encode(picture, as: .jpeg).write(to: pictureFile)

        let vips = Measure.which("vips")
        let vipsThumbnail = Measure.which("vipsthumbnail")
        let missing = "apt-get install libvips-tools"
        // libvips' own uncompressed format: its run then costs little more than the operation itself.
        let photoV = out.appendingPathComponent("photo.v").path
        let pictureV = out.appendingPathComponent("picture.v").path
        if let vips {
            try Measure.run(vips, ["copy", photo.path, photoV])
            try Measure.run(vips, ["copy", pictureFile.path, pictureV])
        }
        var rows: [Row] = []

        let resize = ResizingTransformer(size: PixelSize(width: 256, height: 256), scaleMode: .aspectFit)
        let scale = String(256.0 / Double(max(full.width, full.height)))
        let resizeOurs = try Measure.median(iterations: iterations) { _ = try resize.transform(full, forKey: "") }
        let resizeVips = try vips.map { try Measure.process($0, ["resize", photoV, out.appendingPathComponent("r.v").path, scale], iterations: iterations) }
        rows.append(Row(name: "resize decoded 20.4 MP photo to 256 px, in process", ours: resizeOurs,
                        reference: "vips resize .v to .v, whole process", referenceValue: resizeVips, goal: nil, note: missing))

        let blur = BlurTransformer(radius: 20)
        let blurOurs = try Measure.median(iterations: iterations) { _ = try blur.transform(picture, forKey: "") }
        let blurVips = try vips.map { try Measure.process($0, ["gaussblur", pictureV, out.appendingPathComponent("g.v").path, "20"], iterations: iterations) }
        rows.append(Row(name: "blur radius 20 of 1920x1080, in process", ours: blurOurs,
                        reference: "vips gaussblur .v to .v 20, whole process", referenceValue: blurVips, goal: 1.0, note: missing))

        rows += try smartCropRows(full, iterations: iterations)

        let tool = ProcessInfo.processInfo.environment["WEBIMAGE_BIN"] ?? packageRoot.appendingPathComponent(".build/release/webimage").path
        guard FileManager.default.isExecutableFile(atPath: tool) else {
            FileHandle.standardError.write(Data("bench: \(tool) is missing: run `swift build -c release --product webimage` in the package root\n".utf8))
            return rows
        }
        let jpeg = ["--format", "jpeg", "--out", out.path]
        let thumbnailOurs = try Measure.process(tool, ["decode", "--thumbnail", "512", "--transform", "resize=256x256,fit"] + jpeg + [photo.path],
                                                iterations: iterations)
        let thumbnailVips = try vipsThumbnail.map { try Measure.process($0, ["-s", "256", "-o", out.path + "/%s-vips.jpg", photo.path], iterations: iterations) }
        rows.append(Row(name: "20.4 MP JPEG → 256 px JPEG: thumbnail decode + resize, whole process", ours: thumbnailOurs,
                        reference: "vipsthumbnail -s 256", referenceValue: thumbnailVips, goal: 1.0, note: missing))

        let fullOurs = try Measure.process(tool, ["decode", "--transform", "resize=256x256,fit"] + jpeg + [photo.path], iterations: iterations)
        let fullVips = try vips.map { try Measure.process($0, ["resize", photo.path, out.appendingPathComponent("r.jpg").path, scale], iterations: iterations) }
        rows.append(Row(name: "20.4 MP JPEG → 256 px JPEG: full decode + resize, whole process", ours: fullOurs,
                        reference: "vips resize", referenceValue: fullVips, goal: 1.0, note: missing))

        let blurProcessOurs = try Measure.process(tool, ["decode", "--transform", "blur=20"] + jpeg + [pictureFile.path], iterations: iterations)
        let blurProcessVips = try vips.map { try Measure.process($0, ["gaussblur", pictureFile.path, out.appendingPathComponent("g.jpg").path, "20"], iterations: iterations) }
        rows.append(Row(name: "1080p JPEG blurred (radius 20) to JPEG, whole process", ours: blurProcessOurs,
                        reference: "vips gaussblur", referenceValue: blurProcessVips, goal: 1.0, note: missing))
        return rows
    }

    /// Smart gravity against a centred fill of a 2K photo (2040x1356, the DIV2K size imgproxy's
    /// benchmark uses) into 512x512: the whole request's work (JPEG decode, fill, JPEG encode), and
    /// the transform alone; measured interleaved so both see the same machine.
    static func smartCropRows(_ full: Image, iterations: Int) throws -> [Row] {
        let photo = try ResizingTransformer(size: PixelSize(width: 2040, height: 1356), scaleMode: .aspectFill).transform(full, forKey: "")
        let jpeg = try CoderRegistry.shared.encode(photo, as: .jpeg)
        func fill(_ gravity: Gravity) -> ProcessingTransformer {
            var options = ProcessingOptions()
            (options.resizingType, options.width, options.height, options.gravity) = (.fill, 512, 512, gravity)
            return ProcessingTransformer(options: options)
        }
        let smart = fill(Gravity(.smart)), centred = fill(.center)
        func request(_ transformer: ProcessingTransformer) throws {
            let decoded = try CoderRegistry.shared.decode(jpeg)
            _ = try CoderRegistry.shared.encode(try transformer.transform(decoded, forKey: ""), as: .jpeg)
        }
        let whole = try Measure.interleaved(iterations: iterations, { try request(smart) }, reference: { try request(centred) })
        // Shrink-on-load for a fill: the smallest JPEG decode that covers 512x512 (DCT scaling), then the fill.
        var covering = DecodeOptions(thumbnailPixelSize: PixelSize(width: 512, height: 512))
        covering.thumbnailCoversBox = true
        let shrunk = try Measure.interleaved(iterations: iterations, {
            _ = try CoderRegistry.shared.encode(try centred.transform(try CoderRegistry.shared.decode(jpeg, options: covering), forKey: ""),
                                                as: .jpeg)
        }, reference: { try request(centred) })
        let alone = try Measure.interleaved(iterations: iterations, { _ = try smart.transform(photo, forKey: "") },
                                            reference: { _ = try centred.transform(photo, forKey: "") })
        return [
            Row(name: "2040x1356 JPEG → fill 512x512 JPEG with g:sm (decode + fill + encode)", ours: whole.ours,
                reference: "the same with g:ce (centred fill)", referenceValue: whole.reference, goal: 1 / 1.15),
            Row(name: "fill 512x512 of the decoded 2040x1356 photo with g:sm, transform alone", ours: alone.ours,
                reference: "the same with g:ce", referenceValue: alone.reference, goal: nil),
            Row(name: "2040x1356 JPEG → fill 512x512 JPEG, decoded to the smallest size covering the box", ours: shrunk.ours,
                reference: "the same from a full-size decode", referenceValue: shrunk.reference, goal: nil),
        ]
    }
}
