import Foundation
import WebImage

/// `bench variant-profile`: nothing but warm disk hits of one encoded variant, for a profiler
/// (`perf record -g .build/release/bench variant-profile`). Prints the time per hit and per plain read.
enum VariantProfile {
    static func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-variant-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ImageCache(directory: directory, config: ImageCacheConfig(shouldCacheImagesInMemory: false, shouldUseWeakMemoryCache: false,
                                                                              diskSweepInterval: nil))
        let manager = WebImageManager(cache: cache, loader: FileLoader(), config: WebImageManagerConfig(maxVariantMemoryCost: 0))
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 256, height: 256))
        let url = packageRoot.appendingPathComponent("Samples/mandelbrot.jpg")
        _ = try await manager.loadVariant(url: url, format: .exactly(.jpeg), options: .waitStoreCache, context: context)
        let path = try requireBench(cache.cachePath(forKey: try requireBench(manager.variantCacheKey(for: url, format: .exactly(.jpeg), context: context))))
        let count = 200_000
        let start = ContinuousClock.now
        for _ in 0..<count { _ = try await manager.loadVariant(url: url, format: .exactly(.jpeg), context: context) }
        let hits = ContinuousClock.now - start
        let readStart = ContinuousClock.now
        for _ in 0..<count { _ = try CacheBenchmarks.readPlain(path) }
        let reads = ContinuousClock.now - readStart
        print("warm disk hit \(hits / count), read() \(reads / count)")
    }
}
