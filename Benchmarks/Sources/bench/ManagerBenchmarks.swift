import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import WebImage

/// `WebImageManager.loadImage` against the bare work it wraps: a memory hit against a bare
/// `Mutex<[String: Image]>` lookup, a disk hit against `read()` + decode, cold loads from nginx
/// against bare URLSession + decode, and the peak RSS of 10k distinct loads under a 100 MB limit.
enum ManagerBenchmarks {
    static func run(iterations: Int) async throws -> [Row] {
        var rows: [Row] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-manager-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sample = packageRoot.appendingPathComponent("Samples/mandelbrot.jpg")
        let jpeg = try Data(contentsOf: sample)

        // Memory hits.
        let memoryCache = ImageCache(directory: directory.appendingPathComponent("memory"), config: ImageCacheConfig(diskSweepInterval: nil))
        let manager = WebImageManager(cache: memoryCache, loader: FileLoader())
        let image = try CoderRegistry.shared.decode(jpeg)
        let urls = (0..<1000).map { URL(string: "https://example.com/images/\($0).jpg")! }
        let keys = urls.map(\.absoluteString)
        let bare = Mutex<[String: Image]>([:])
        for (url, key) in zip(urls, keys) {
            memoryCache.memoryCache.setValue(image, forKey: manager.cacheKey(for: url)!, cost: image.cost)
            bare.withLock { $0[key] = image }
        }
        let operations = 100_000
        let (hit, bareHit) = try await DownloadBenchmarks.interleaved(iterations) {
            for index in 0..<operations { _ = try await manager.loadImage(url: urls[index % 1000]) }
        } reference: {
            for index in 0..<operations { _ = bare.withLock { $0[keys[index % 1000]] } }
        }
        rows.append(Row(name: "loadImage memory hit x\(operations / 1000)k", ours: hit, reference: "Mutex<[String: Image]> lookup",
                        referenceValue: bareHit, goal: 0.2))

        // Disk hits: a cache with no memory tier, so every load reads and decodes the file.
        let diskOnly = ImageCache(directory: directory.appendingPathComponent("disk"),
                                  config: ImageCacheConfig(shouldCacheImagesInMemory: false, shouldUseWeakMemoryCache: false, diskSweepInterval: nil))
        let diskManager = WebImageManager(cache: diskOnly, loader: FileLoader())
        let diskURL = URL(string: "https://example.com/disk.jpg")!
        try await diskOnly.storeData(jpeg, forKey: diskURL.absoluteString)
        let path = try requireBench(diskOnly.cachePath(forKey: diskURL.absoluteString))
        let (diskHit, plainDisk) = try await DownloadBenchmarks.interleaved(iterations * 4) {
            let result = try await diskManager.loadImage(url: diskURL)
            if result.cacheType != .disk { throw BenchError("expected a disk hit, got \(result.cacheType)") }
        } reference: {
            _ = try CoderRegistry.shared.decode(try CacheBenchmarks.readPlain(path))
        }
        rows.append(Row(name: "loadImage disk hit (\(jpeg.count / 1000) KB JPEG)", ours: diskHit, reference: "read() + decode",
                        referenceValue: plainDisk, goal: 0.9))

        // Warm variants: the stored bytes of a 256 px WebP, from disk (no memory tier for variants) and
        // from memory, against read() of the same file. Nothing is decoded or encoded.
        let variantManager = WebImageManager(cache: diskOnly, loader: FileLoader(),
                                             config: WebImageManagerConfig(maxVariantMemoryCost: 0))
        let variantContext = WebImageContext(thumbnailPixelSize: PixelSize(width: 256, height: 256))
        let sampleURL = sample
        _ = try await variantManager.loadVariant(url: sampleURL, format: .exactly(.jpeg), options: .waitStoreCache, context: variantContext)
        let variantKey = try requireBench(variantManager.variantCacheKey(for: sampleURL, format: .exactly(.jpeg), context: variantContext))
        let variantPath = try requireBench(diskOnly.cachePath(forKey: variantKey))
        let memoryVariants = WebImageManager(cache: diskOnly, loader: FileLoader())
        _ = try await memoryVariants.loadVariant(url: sampleURL, format: .exactly(.jpeg), context: variantContext)
        for (manager, tier) in [(variantManager, ImageCacheType.disk), (memoryVariants, .memory)] {
            let (hit, plain) = try await DownloadBenchmarks.interleaved(iterations * 4) {
                for _ in 0..<100 {
                    let variant = try await manager.loadVariant(url: sampleURL, format: .exactly(.jpeg), context: variantContext)
                    if variant.cacheType != tier { throw BenchError("expected a \(tier) hit, got \(variant.cacheType)") }
                }
            } reference: {
                for _ in 0..<100 { _ = try CacheBenchmarks.readPlain(variantPath) }
            }
            rows.append(Row(name: "loadVariant warm \(tier == .disk ? "disk" : "memory") hit x100 (256 px JPEG)", ours: hit,
                            reference: "read() of the same file x100", referenceValue: plain, goal: 0.9))
        }

        // Cold loads from nginx: no cache tier at all, so each round downloads and decodes everything.
        if (try? await URLSession.shared.data(from: URL(string: DownloadBenchmarks.base + "0.jpg")!)) != nil {
            let small = (0..<1000).map { URL(string: DownloadBenchmarks.base + "\($0).jpg")! }
            let cold = WebImageContext(queryCacheType: .none, storeCacheType: .none, originalQueryCacheType: .none, originalStoreCacheType: .none)
            let (ours, reference) = try await DownloadBenchmarks.interleaved(max(5, iterations / 2)) {
                let pipeline = WebImageManager(cache: memoryCache, loader: Downloader(config: DownloaderConfig(maxConcurrentDownloads: 6)))
                try await DownloadBenchmarks.windowed(small, inFlight: 6, expected: small.count) { url in
                    _ = try await pipeline.loadImage(url: url, context: cold)
                    return 1
                }
            } reference: {
                let configuration = URLSessionConfiguration.ephemeral
                configuration.urlCache = nil
                let session = URLSession(configuration: configuration)
                defer { session.finishTasksAndInvalidate() }
                try await DownloadBenchmarks.windowed(small, inFlight: 6, expected: small.count) { url in
                    _ = try CoderRegistry.shared.decode(try await session.data(for: DownloadBenchmarks.sameRequest(as: url)).0)
                    return 1
                }
            }
            rows.append(Row(name: "1000 cold loads from nginx, 6 at a time (\(String(format: "%.0f", 1_000_000 / ours)) images/s)", ours: ours,
                            reference: "URLSession data(for:) + decode (\(String(format: "%.0f", 1_000_000 / reference)) images/s)",
                            referenceValue: reference, goal: 0.9))
            rows.append(try peakRSSRow())
        } else {
            rows.append(Row(name: "cold loads and peak RSS", ours: 0, reference: "nginx on 127.0.0.1:8089", referenceValue: nil,
                            note: "run Benchmarks/nginx/serve.sh start (apt-get install nginx)"))
        }
        return rows
    }

    /// Runs `bench rss-child` in a fresh process and reads the peak RSS it reports.
    static func peakRSSRow() throws -> Row {
        let (status, output) = try Measure.run(CommandLine.arguments[0], ["rss-child"])
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("peak") }) else {
            throw BenchError("rss-child failed: \(output)")
        }
        let fields = line.split(separator: " ").compactMap { Double($0) }
        guard fields.count == 2 else { throw BenchError("rss-child printed \(line)") }
        let (peak, baseline) = (fields[0], fields[1])
        let limit = 100.0 + 64.0
        return Row(name: String(format: "peak RSS, 10k distinct loads, 100 MB memory limit: %.0f MB (%.0f MB before loading)", peak, baseline),
                   ours: peak, reference: "goal: limit + 64 MB", referenceValue: limit, goal: 1.0,
                   note: "lower is better; ratio = allowed / peak", unit: "MB")
    }

    /// The child: loads 10 000 distinct URLs (nginx's 1000 files under ten query strings each) through a
    /// manager whose memory tier is limited to 100 MB, then prints its peak RSS and the one before.
    static func rssChild() async throws {
        let baseline = peakRSSMegabytes()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-rss-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ImageCache(directory: directory, config: ImageCacheConfig(maxMemoryCost: 100 << 20, shouldUseWeakMemoryCache: false,
                                                                              diskSweepInterval: nil))
        let manager = WebImageManager(cache: cache, loader: Downloader(config: DownloaderConfig(maxConcurrentDownloads: 6)))
        let urls = (0..<10_000).map { URL(string: DownloadBenchmarks.base + "\($0 % 1000).jpg?v=\($0 / 1000)")! }
        try await DownloadBenchmarks.windowed(urls, inFlight: 6, expected: urls.count) { url in
            _ = try await manager.loadImage(url: url, options: .cacheMemoryOnly)
            return 1
        }
        print(String(format: "peak %.1f %.1f", peakRSSMegabytes(), baseline))
    }

    /// VmHWM from /proc/self/status, in MB.
    static func peakRSSMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kilobytes = line.split(separator: " ").compactMap({ Double($0) }).first else { return 0 }
        return kilobytes / 1024
    }
}
