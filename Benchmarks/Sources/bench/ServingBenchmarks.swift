import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebImage
import WebImageAVIF
import WebImageWebP

/// `bench serving`: encoded variants as a server makes them, against the servers teams run today.
///
/// - **The server case** (DESIGN.md): 300 distinct 1600×1200 JPEGs from nginx fitted into 256 px
///   JPEGs (quality 80, as thumbor is set), 6 at a time, with a cold cache and then a warm one in a new process:
///   `webimage fetch --format jpeg` against thumbor 7.8 with its file result storage, both writing
///   every result to a directory (`serving/thumbor_bench.py`).
/// - **imgproxy's published benchmark** (2 clients, DIV2K-sized 2040×1356 photos fitted into 512 px;
///   JPEG q80, PNG, WebP q75, AVIF q65, each from a source of its own format): `loadVariant` with no
///   cache tier, 2 at a time, against libvips 8.18 through pyvips doing `thumbnail_buffer` and the
///   save imgproxy makes (`serving/vips_reference.py`).
///
/// Each row names both sides' mean output size and PSNR against a full-quality resize
/// (`serving/quality.py`). Needs `Benchmarks/serving/setup.sh` and `prepare.py` (see its README).
enum ServingBenchmarks {
    static let servingURL = "http://127.0.0.1:8089/serving/"
    static var python: String {
        (ProcessInfo.processInfo.environment["WEBIMAGE_BENCH_VENV"] ?? "/tmp/webimage-bench-venv") + "/bin/python"
    }
    static var scripts: URL { packageRoot.appendingPathComponent("Benchmarks/serving") }

    /// What is missing for the group, or nil when everything is there.
    static func missing() -> String? {
        guard FileManager.default.isExecutableFile(atPath: python) else { return "Benchmarks/serving/setup.sh" }
        guard let curl = Measure.which("curl"),
              let answer = try? Measure.run(curl, ["-s", "-w", "%{http_code}", "-o", "/dev/null", servingURL + "photos/299.jpg",
                                                   "-o", "/dev/null", servingURL + "div2k/avif/19.avif"]),
              answer.output == "200200" else { return "Benchmarks/serving/prepare.py and Benchmarks/nginx/serve.sh start" }
        guard FileManager.default.isExecutableFile(atPath: Environment.tool) else { return "swift build -c release --product webimage" }
        return nil
    }

    static func run(iterations: Int) async throws -> [Row] {
        if let missing = missing() {
            return [Row(name: "serving benchmarks", ours: 0, reference: "thumbor and libvips", referenceValue: nil, goal: nil,
                        note: "run \(missing)")]
        }
        CoderRegistry.shared.add(WebPCoder())
        CoderRegistry.shared.add(AVIFCoder())
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-serving-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        return try serverCase(work: work) + (try await imgproxyCells(work: work, count: 80))
    }

    // MARK: - The server case

    /// Rounds of each comparison, ours and the reference alternately: this machine's speed drifts
    /// by a quarter within a minute, and the median of alternating rounds hits both sides alike.
    static let rounds = 3

    private static func serverCase(work: URL) throws -> [Row] {
        let urls = (0..<300).map { servingURL + "photos/\($0).jpg" }
        var ours: [String: [Double]] = [:]
        var thumbor: [String: [Double]] = [:]
        var version = ""
        for round in 0..<rounds {
            let cacheDirectory = work.appendingPathComponent("webimage-cache-\(round)").path
            let thumborState = work.appendingPathComponent("thumbor-state-\(round)").path
            for phase in ["cold", "warm"] {
                let out = work.appendingPathComponent("ours-\(phase)").path
                try? FileManager.default.removeItem(atPath: out)
                let start = ContinuousClock.now
                let result = try Measure.run(Environment.tool, ["fetch", "--format", "jpeg", "--quality", "80", "--thumbnail", "256", "--concurrency", "6",
                                                                "--cache-dir", cacheDirectory, "--out", out] + urls)
                guard result.status == 0 else { throw BenchError("webimage fetch failed: \(result.output.suffix(500))") }
                ours[phase, default: []].append(Measure.milliseconds(ContinuousClock.now - start))

                let thumborOut = work.appendingPathComponent("thumbor-\(phase)").path
                try? FileManager.default.removeItem(atPath: thumborOut)
                let json = try script("thumbor_bench.py", ["--phase", phase, "--state-dir", thumborState, "--out", thumborOut])
                version = json["thumbor"] as? String ?? "?"
                thumbor[phase, default: []].append(((json["seconds"] as? Double) ?? .nan) * 1000)
            }
            // thumbor as it ships (ENGINE_THREADPOOL_SIZE 0: images processed on its one I/O thread).
            let json = try script("thumbor_bench.py", ["--phase", "cold", "--threadpool", "0", "--state-dir", thumborState + "-default",
                                                       "--out", work.appendingPathComponent("thumbor-default").path])
            thumbor["default", default: []].append(((json["seconds"] as? Double) ?? .nan) * 1000)
        }
        let photos = FileManager.default.temporaryDirectory.path + "/webimage-bench-nginx/serving/photos"
        let asShipped = Row(name: "300 photos 1600x1200 -> 256 px JPEG, 6 at a time, cold, against thumbor's default engine threads",
                            ours: median(ours["cold"]!), reference: "thumbor \(version), as shipped (engine on its I/O thread)",
                            referenceValue: median(thumbor["default"]!), goal: 6)
        return try ["cold", "warm"].map { phase in
            let oursQuality = try quality(sources: photos, outputs: work.appendingPathComponent("ours-\(phase)").path)
            let thumborQuality = try quality(sources: photos, outputs: work.appendingPathComponent("thumbor-\(phase)").path)
            return Row(name: "300 photos 1600x1200 -> 256 px JPEG, 6 at a time, \(phase) (ours \(oursQuality); thumbor \(thumborQuality))",
                       ours: median(ours[phase]!), reference: "thumbor \(version), 2 engine threads, file result storage",
                       referenceValue: median(thumbor[phase]!), goal: phase == "cold" ? 6 : 2)
        } + [asShipped]
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    // MARK: - imgproxy's benchmark

    private struct Cell: Sendable {
        var format: ImageFormat
        var sourceExtension: String
        var encoding: EncodeOptions
        var label: String
    }

    /// The encoders set as imgproxy's benchmark sets libvips: JPEG q80 progressive (optimised
    /// Huffman tables), PNG with the default compression, WebP q75, AVIF q65 at libaom speed 9.
    private static let cells: [Cell] = [
        Cell(format: .jpeg, sourceExtension: "jpg", encoding: EncodeOptions(compressionQuality: 0.8, isProgressive: true), label: "JPEG q80"),
        Cell(format: .png, sourceExtension: "png", encoding: EncodeOptions(), label: "PNG"),
        Cell(format: .webp, sourceExtension: "webp", encoding: EncodeOptions(compressionQuality: 0.75), label: "WebP q75"),
        Cell(format: .avif, sourceExtension: "avif", encoding: EncodeOptions(compressionQuality: 0.65, compressionEffort: 0.1), label: "AVIF q65"),
    ]

    private static func imgproxyCells(work: URL, count: Int) async throws -> [Row] {
        var rows: [Row] = []
        for cell in cells {
            let sources = servingURL + "div2k/\(cell.sourceExtension)/"
            let oursOut = work.appendingPathComponent("ours-\(cell.sourceExtension)")
            try FileManager.default.createDirectory(at: oursOut, withIntermediateDirectories: true)
            let vipsOut = work.appendingPathComponent("vips-\(cell.sourceExtension)").path
            var oursTimes: [Double] = [], vipsTimes: [Double] = []
            var version = "?"
            for _ in 0..<rounds {
                oursTimes.append(try await variants(cell, sources: sources, count: count, out: oursOut))
                let json = try script("vips_reference.py", ["--format", cell.sourceExtension, "--count", "\(count)", "--workers", "2",
                                                            "--sources", sources, "--out", vipsOut])
                vipsTimes.append(((json["seconds"] as? Double) ?? .nan) * 1000)
                version = json["libvips"] as? String ?? "?"
            }
            let oursMS = median(oursTimes), vipsMS = median(vipsTimes)
            let oursQuality = try quality(sources: sources, outputs: oursOut.path)
            let vipsQuality = try quality(sources: sources, outputs: vipsOut)
            rows.append(Row(name: String(format: "2040x1356 -> 512 px %@, 2 workers, %d results: ours %.1f/s %@; libvips %.1f/s %@",
                                         cell.label, count, Double(count) / oursMS * 1000, oursQuality,
                                         Double(count) / vipsMS * 1000, vipsQuality),
                            ours: oursMS, reference: "pyvips \(version) thumbnail_buffer + save", referenceValue: vipsMS, goal: 1.5))
        }
        return rows
    }

    /// `count` variants made by 2 workers, each URL fetched, decoded, fitted and encoded (no cache
    /// tier); the first 20 results written to `out` for the quality check. Returns milliseconds.
    private static func variants(_ cell: Cell, sources: String, count: Int, out: URL) async throws -> Double {
        let cache = ImageCache(directory: out.appendingPathComponent(".unused"), config: ImageCacheConfig(diskSweepInterval: nil))
        let manager = WebImageManager(cache: cache, loader: Downloader(config: DownloaderConfig(maxConcurrentDownloads: 2)),
                                      config: WebImageManagerConfig(maxVariantMemoryCost: 0))
        var context = WebImageContext(queryCacheType: .none, storeCacheType: .none, originalQueryCacheType: .none, originalStoreCacheType: .none)
        context.thumbnailPixelSize = PixelSize(width: 512, height: 512)
        let load: @Sendable (Int) async throws -> ImageVariant = { [context] index in
            let url = URL(string: sources + "\(index % 20).\(cell.sourceExtension)")!
            return try await manager.loadVariant(url: url, format: .exactly(cell.format), encoding: cell.encoding, context: context)
        }
        for index in 0..<20 {   // the outputs checked for quality, and a warm-up
            try await load(index).data.write(to: out.appendingPathComponent("\(index).\(cell.sourceExtension)"))
        }
        let start = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                group.addTask {
                    for index in stride(from: worker, to: count, by: 2) { _ = try await load(index) }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = Measure.milliseconds(ContinuousClock.now - start)
        await manager.shutdown()
        try? FileManager.default.removeItem(at: out.appendingPathComponent(".unused"))
        return elapsed
    }

    // MARK: - The Python side

    /// Runs one of `serving/*.py` and returns the JSON object its last line prints.
    private static func script(_ name: String, _ arguments: [String]) throws -> [String: Any] {
        let result = try Measure.run(python, [scripts.appendingPathComponent(name).path] + arguments)
        guard result.status == 0, let line = result.output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw BenchError("\(name) \(arguments.joined(separator: " ")) failed: \(result.output.suffix(800))")
        }
        return object
    }

    /// "9.1 KB, 35.2 dB": the mean size and PSNR of `outputs` against full-quality resizes of `sources`.
    private static func quality(sources: String, outputs: String) throws -> String {
        let json = try script("quality.py", ["--sources", sources, "--outputs", outputs])
        let bytes = (json["mean_bytes"] as? Double) ?? .nan
        let psnr = (json["mean_psnr_db"] as? Double) ?? .nan
        return String(format: "%.1f KB, %.1f dB", bytes / 1000, psnr)
    }
}
