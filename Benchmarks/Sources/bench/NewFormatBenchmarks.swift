import CBaseline
import Foundation
import WebImage
import WebImageJXL
import WebImageSVG
import WebImageTIFF

/// TIFF, JPEG XL, BMP and ICO decoding against their references, in the same run: bare C loops over libtiff
/// and libjxl (tiff2rgba's and djxl's decodes without their file I/O), and ImageMagick's `convert -bench`
/// (one thread) for BMP and ICO, which have no library here. The sources are made from the corpus's 20.4 MP
/// photo by WebImage's own encoders. SVG: `SVGCoder` (sanitise, `rsvg-convert` in a child, its PNG decoded)
/// against `rsvg-convert` itself run on the same document at the same size, its PNG thrown away.
enum NewFormatBenchmarks {
    static func run(iterations: Int) throws -> [Row] {
        var rows: [Row] = []
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 6100 * 3400 * 4, alignment: 64)
        defer { buffer.deallocate() }
        let photo = try JPEGCoder().decode(FormatBenchmarks.file("large/lomiri/Kleiber_by_Lukas_Baubkus.jpg"))
        let megapixels = Double(photo.width * photo.height) / 1e6
        let cLoops: [(String, Data, any ImageCoder, String, (UnsafePointer<UInt8>?, Int, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>) -> Int32)] = [
            ("TIFF, Deflate + predictor", try TIFFCoder().encode(photo, as: .tiff), TIFFCoder(), "C loop, libtiff strips (tiff2rgba's decode)",
             { baseline_decode_tiff($0, $1, $2?.assumingMemoryBound(to: UInt8.self), $3, $4, $5) }),
            ("JPEG XL, lossy q80 e3", try JXLCoder().encode(photo, as: .jxl, options: EncodeOptions(compressionQuality: 0.8, compressionEffort: 0.25)),
             JXLCoder(), "C loop, libjxl RGBA, one thread (djxl's decode)",
             { baseline_decode_jxl($0, $1, $2?.assumingMemoryBound(to: UInt8.self), $3, $4, $5) }),
        ]
        for (label, data, coder, reference, loop) in cLoops {
            let (ours, theirs) = data.withUnsafeBytes { bytes in
                Measure.interleaved(iterations: iterations) {
                    _ = try? coder.decode(data, options: DecodeOptions())
                } reference: {
                    var width: Int32 = 0, height: Int32 = 0
                    if loop(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, buffer.baseAddress, buffer.count, &width, &height) != 0 {
                        fail("the C loop could not decode the \(label)")
                    }
                }
            }
            rows.append(Row(name: "decode \(label) \(photo.width)x\(photo.height) (\(data.count / 1000) KB)", ours: ours, reference: reference,
                            referenceValue: theirs, megapixels: megapixels, goal: 0.95))
        }
        let icon = try ICOCoder().encode(photo, as: .ico)
        for (label, format, data, size) in [("BMP, 24-bit", ImageFormat.bmp, try BMPCoder().encode(photo, as: .bmp), photo.size),
                                            ("ICO, one 256 px PNG entry", .ico, icon, try ICOCoder().decode(icon).size)] {
            let coder: any ImageCoder = format == .bmp ? BMPCoder() : ICOCoder()
            let ours = Measure.median(iterations: iterations) { _ = try? coder.decode(data, options: DecodeOptions()) }
            let theirs = try convertBench(data, extension: format.fileExtension ?? "img", iterations: max(iterations, 5))
            rows.append(Row(name: "decode \(label) \(size.width)x\(size.height)", ours: ours,
                            reference: "ImageMagick convert -bench (1 thread)", referenceValue: theirs,
                            megapixels: Double(size.width * size.height) / 1e6, goal: 1, note: theirs == nil ? "convert not installed" : ""))
        }
        rows.append(try svgRow(iterations: iterations))
        return rows
    }

    /// An illustration of 400 shapes with gradients, rendered at 1600 x 1200.
    static func svgRow(iterations: Int) throws -> Row {
        var shapes = ""
        for index in 0..<400 {
            let (x, y) = (index * 37 % 800, index * 53 % 600)
            shapes += "<circle cx=\"\(x)\" cy=\"\(y)\" r=\"\(10 + index % 40)\" fill=\"url(#g\(index % 3))\" opacity=\"0.6\"/>"
            shapes += "<path d=\"M\(x) \(y) q 30 -40 60 0 t 60 0\" stroke=\"#334\" fill=\"none\" stroke-width=\"2\"/>"
        }
        let gradients = (0..<3).map { "<linearGradient id=\"g\($0)\"><stop offset=\"0\" stop-color=\"#f\($0 * 3)0\"/><stop offset=\"1\" stop-color=\"#0\($0 * 3)f\"/></linearGradient>" }
        let document = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"600\" viewBox=\"0 0 800 600\"><defs>"
                             + gradients.joined() + "</defs>" + shapes + "</svg>").utf8)
        let size = PixelSize(width: 1600, height: 1200)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(getpid()).svg")
        try document.write(to: file)
        let output = file.appendingPathExtension("png")
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: output)
        }
        let options = DecodeOptions(thumbnailPixelSize: size)
        let (ours, theirs) = Measure.interleaved(iterations: iterations) {
            _ = try? SVGCoder().decode(document, options: options)
        } reference: {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/rsvg-convert")
            process.arguments = ["-w", "1600", "-h", "1200", "-o", output.path, file.path]   // rsvg-convert refuses /dev/null
            do { try process.run() } catch { fail("rsvg-convert: \(error)") }
            process.waitUntilExit()
        }
        return Row(name: "decode SVG, 800 shapes at 1600x1200 (\(document.count / 1000) KB)", ours: ours,
                   reference: "rsvg-convert on the same document and size", referenceValue: theirs, megapixels: 1.92, goal: 0.95)
    }

    /// Milliseconds per decode of `data` by ImageMagick, from `convert -limit thread 1 -bench N FILE null:`
    /// (its own in-process repetitions: "N i X ips"); `nil` without `convert`.
    static func convertBench(_ data: Data, extension: String, iterations: Int) throws -> Double? {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-\(getpid()).\(`extension`)")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/convert")
        guard FileManager.default.isExecutableFile(atPath: process.executableURL!.path) else { return nil }
        process.arguments = ["-limit", "thread", "1", "-bench", String(iterations), file.path, "null:"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // "Performance[1]: 5i 7.109ips ..." per thread setting: the best iterations-per-second figure.
        let rates = output.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { word -> Double? in
            word.hasSuffix("ips") ? Double(word.dropLast(3)) : nil
        }
        guard let best = rates.max(), best > 0 else { fail("convert -bench printed no rate: \(output)") }
        return 1000 / best
    }
}
