import Foundation
import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageJXL
import WebImageTIFF
import WebImageWebP

/// The encodes behind `Benchmarks/autoquality/run.py`, which scores them with SSIMULACRA2 (a tool we
/// did not write) and prints the table.
///
/// - `bench autoquality-encode LIST OUT`: every picture of LIST (a TSV whose first column is a path
///   under the corpus) decoded, resized to fit `AQ_SIDE` (default 640) pixels as the server resizes,
///   written as `OUT/<n>/reference.png`; then, for JPEG, WebP and AVIF, the resize at the fixed quality
///   (`AQ_FIXED`, default 80) and searched by DSSIM at every target of `AQ_TARGETS` between `AQ_MIN` and
///   `AQ_MAX` (default 30 and 95), each written with our decode of it as PNG beside it. One JSON line per
///   encode on stdout: picture, format, method, target, quality, encodes, bytes, milliseconds, files.
/// - `bench autoquality-cost LIST FORMAT METHOD TARGET`: the cost of a cold server-like request (a local file
///   read, decoded, resized, encoded, stored) at the fixed quality and with the search, and of a warm one,
///   median of `BENCH_ITERATIONS` over the pictures, as JSON lines.
enum AutoQualityBenchmark {
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), BMPCoder(), ICOCoder(), WebPCoder(), AVIFCoder(),
                                               HEIFCoder(), JXLCoder(), TIFFCoder()])
    static let formats: [ImageFormat] = [.jpeg, .webp, .avif]
    static let environment = ProcessInfo.processInfo.environment
    static let side = Int(environment["AQ_SIDE"] ?? "") ?? 640
    static let fixedQuality = Int(environment["AQ_FIXED"] ?? "") ?? 80
    static let bounds = (Int(environment["AQ_MIN"] ?? "") ?? 30)...(Int(environment["AQ_MAX"] ?? "") ?? 95)
    static let targets = (environment["AQ_TARGETS"] ?? "0.0005,0.00075,0.001,0.0015,0.002,0.003,0.004,0.006")
        .split(separator: ",").compactMap { Double($0) }
    static let scores = (environment["AQ_SCORES"] ?? "60,62.5,65,67.5,70,72.5,75,77.5,80,85")
        .split(separator: ",").compactMap { Double($0) }

    /// The search of `method` (`dssim` or `ssimulacra2`) at `target` within the bounds.
    static func automatic(_ method: String, _ target: Double) -> AutomaticQuality {
        let search: AutomaticQuality.Method = method == "dssim" ? .dssim(target: target, allowedError: target / 10)
            : .ssimulacra2(score: target, allowedError: 0.5)
        return AutomaticQuality(method: search, minQuality: bounds.lowerBound, maxQuality: bounds.upperBound, formatMinQualities: [:],
                                formatMaxQualities: [:])
    }

    /// The pictures of `list`: corpus paths, first column, `#` lines skipped.
    static func pictures(_ list: URL) throws -> [URL] {
        try String(contentsOf: list, encoding: .utf8).split(whereSeparator: \.isNewline).compactMap { line in
            let path = line.split(separator: "\t").first.map(String.init) ?? ""
            guard !path.isEmpty, !path.hasPrefix("#"), path != "path" else { return nil }
            return corpus.deletingLastPathComponent().appendingPathComponent(path)
        }
    }

    /// The encode options the server would use for `format` at a fixed quality: imgproxy's speeds.
    static func options(quality: Int) -> EncodeOptions {
        var options = EncodeOptions(compressionQuality: Double(quality) / 100)
        options.formatEfforts = [.avif: 0.1, .webp: 4.0 / 6]
        return options
    }

    /// The picture decoded, composited over white when it has alpha (JPEG has none, and SSIMULACRA2's
    /// Python port drops alpha before comparing), and resized to fit ``side``.
    static func resized(_ url: URL) throws -> Image {
        var image = try coders.decode(Data(contentsOf: url), options: DecodeOptions(firstFrameOnly: true, convertsToSRGB: true))
        image = try image.reducedToEightBits()
        if image.pixelFormat.hasAlpha { image = try overWhite(image) }
        guard max(image.width, image.height) > side else { return image }
        let size = image.width >= image.height
            ? PixelSize(width: side, height: max(1, Int((Double(image.height) * Double(side) / Double(image.width)).rounded())))
            : PixelSize(width: max(1, Int((Double(image.width) * Double(side) / Double(image.height)).rounded())), height: side)
        return try ResizingTransformer(size: size).transform(image, forKey: "")
    }

    static func overWhite(_ image: Image) throws -> Image {
        let rgba = try image.converted(to: .rgba8)
        var pixels = [UInt8](repeating: 255, count: rgba.width * rgba.height * 3)
        for y in 0..<rgba.height {
            rgba.withUnsafeRow(y) { row in
                for x in 0..<rgba.width {
                    let alpha = Int(row[x * 4 + 3])
                    for c in 0..<3 { pixels[(y * rgba.width + x) * 3 + c] = UInt8((Int(row[x * 4 + c]) * alpha + 255 * (255 - alpha) + 127) / 255) }
                }
            }
        }
        return try Image(width: rgba.width, height: rgba.height, pixelFormat: .rgb8, pixels: pixels)
    }

    static func encode(list: URL, output: URL) throws {
        for (index, url) in try pictures(list).enumerated() {
            let folder = output.appendingPathComponent(String(index))
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let image: Image
            do {
                image = try resized(url)
            } catch {
                FileHandle.standardError.write(Data("bench: skipping \(url.path): \(error)\n".utf8))
                continue
            }
            let reference = folder.appendingPathComponent("reference.png")
            try coders.encode(image, as: .png).write(to: reference)
            for format in formats {
                let name = format.fileExtension ?? format.rawValue
                var runs: [(method: String, target: Double, options: EncodeOptions)] = [("fixed", 0, options(quality: fixedQuality))]
                for (method, values) in [("dssim", targets), ("ssimulacra2", scores)] {
                    for target in values {
                        var searched = options(quality: fixedQuality)
                        searched.automaticQuality = automatic(method, target)
                        runs.append((method, target, searched))
                    }
                }
                for run in runs {
                    let started = ContinuousClock.now
                    let result = try coders.encodeSearchingQuality(image, as: format, options: run.options.resolved(for: format))
                    let elapsed = ContinuousClock.now - started
                    let stem = run.method == "fixed" ? "\(name)-fixed" : "\(name)-\(run.method)-\(run.target)"
                    let file = folder.appendingPathComponent(stem + "." + name), decoded = folder.appendingPathComponent(stem + ".png")
                    try result.data.write(to: file)
                    let decodedImage = try coders.decode(result.data)
                    try coders.encode(decodedImage, as: .png).write(to: decoded)
                    // Our DSSIM of the kept file, and what one comparison costs (prepare both, compare), for run.py's
                    // check against the second implementation.
                    let compareStarted = ContinuousClock.now
                    let dssim = try DSSIM.difference(between: image, and: decodedImage)
                    let compare = ContinuousClock.now - compareStarted
                    var line: [String: Any] = [
                        "picture": url.path, "index": index, "format": format.rawValue, "method": run.method, "target": run.target,
                        "quality": result.quality ?? fixedQuality, "encodes": result.encodes, "bytes": result.data.count,
                        "ms": Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000,
                        "reference": reference.path, "decoded": decoded.path, "width": image.width, "height": image.height,
                    ]
                    line["dssim"] = dssim
                    line["dssim_ms"] = Double(compare.components.attoseconds) / 1e15 + Double(compare.components.seconds) * 1000
                    print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
                }
            }
        }
    }

    /// Cold and warm request times at the fixed quality and with the search of `method` at `target`.
    static func cost(list: URL, format: ImageFormat, method: String, target: Double) async throws {
        let pictures = try pictures(list)
        let encoding = options(quality: fixedQuality)
        var searched = encoding
        searched.automaticQuality = automatic(method, target)
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: side, height: side))
        for (label, options) in [("fixed", encoding), (method, searched)] {
            var cold: [Duration] = [], warm: [Duration] = []
            for _ in 0..<max(1, iterations) {
                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-aq-\(getpid())")
                defer { try? FileManager.default.removeItem(at: directory) }
                let manager = WebImageManager(cache: ImageCache(directory: directory, config: ImageCacheConfig(diskSweepInterval: nil)),
                                              loader: FileLoader(maxBytes: 256 << 20), coders: coders)
                var coldTotal = Duration.zero, warmTotal = Duration.zero
                for url in pictures {
                    let started = ContinuousClock.now
                    _ = try await manager.loadVariant(url: url, format: .exactly(format), encoding: options, options: .waitStoreCache, context: context)
                    coldTotal += ContinuousClock.now - started
                    let warmStarted = ContinuousClock.now
                    _ = try await manager.loadVariant(url: url, format: .exactly(format), encoding: options, context: context)
                    warmTotal += ContinuousClock.now - warmStarted
                }
                cold.append(coldTotal)
                warm.append(warmTotal)
                await manager.shutdown()
            }
            func median(_ values: [Duration]) -> Double {
                let sorted = values.sorted()[values.count / 2]
                return Double(sorted.components.seconds) * 1000 + Double(sorted.components.attoseconds) / 1e15
            }
            let line: [String: Any] = ["format": format.rawValue, "method": label, "target": target, "pictures": pictures.count,
                                       "cold_ms": median(cold), "warm_ms": median(warm)]
            print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
        }
    }
}
