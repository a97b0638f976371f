import Foundation
import Testing
@testable import WebImage

@Suite struct ImageCachesManagerTests {
    func memoryOnly() -> ImageCache {
        ImageCache(directory: URL(fileURLWithPath: "/etc/hostname/none"), config: ImageCacheConfig(diskSweepInterval: nil))
    }

    func image(_ value: UInt8) throws -> Image { try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [value]) }

    @Test func queriesAskTheHighestCacheFirstAndStopAtTheFirstHit() async throws {
        let low = memoryOnly(), high = memoryOnly()
        try await low.store(try image(1), forKey: "k", cacheType: .memory)
        try await high.store(try image(2), forKey: "k", cacheType: .memory)
        try await low.store(try image(3), forKey: "only-low", cacheType: .memory)
        let manager = ImageCachesManager(caches: [low, high])
        #expect(try await manager.query(forKey: "k", query: ImageCacheQuery())?.image.withUnsafeRow(0) { $0[0] } == 2)
        #expect(try await manager.query(forKey: "only-low", query: ImageCacheQuery())?.image.withUnsafeRow(0) { $0[0] } == 3)
        #expect(await manager.containsImage(forKey: "only-low", cacheType: .all) == .memory)
    }

    @Test func storesGoToTheHighestOnlyAndRemovalsToAll() async throws {
        let low = memoryOnly(), high = memoryOnly()
        let manager = ImageCachesManager(caches: [low, high])
        try await manager.store(try image(5), data: nil, forKey: "k", cacheType: .memory, metadata: nil)
        #expect(high.imageFromMemory(forKey: "k") != nil)
        #expect(low.imageFromMemory(forKey: "k") == nil)
        try await low.store(try image(6), forKey: "k", cacheType: .memory)
        await manager.removeImage(forKey: "k", cacheType: .all)
        #expect(high.imageFromMemory(forKey: "k") == nil && low.imageFromMemory(forKey: "k") == nil)
        try await low.store(try image(6), forKey: "x", cacheType: .memory)
        await manager.clear(.all)
        #expect(low.memoryCache.count == 0)
    }

    @Test func aLowestOnlyQueryPolicyIgnoresHigherCaches() async throws {
        let low = memoryOnly(), high = memoryOnly()
        try await high.store(try image(2), forKey: "k", cacheType: .memory)
        let manager = ImageCachesManager(caches: [low, high], queryPolicy: .lowestOnly)
        #expect(try await manager.query(forKey: "k", query: ImageCacheQuery()) == nil)
    }

    /// A real cache whose queries and lookups wait for `gate` (or for their task to be cancelled):
    /// a slow tier, such as a network cache, in front of a fast one.
    struct SlowCache: ImageCaching {
        let base: ImageCache
        let gate: Duration

        func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? {
            try await Task.sleep(for: gate)
            return try await base.query(forKey: key, query: query)
        }
        func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws {
            try await base.store(image, data: data, forKey: key, cacheType: cacheType, metadata: metadata)
        }
        func removeImage(forKey key: String, cacheType: ImageCacheType) async { await base.removeImage(forKey: key, cacheType: cacheType) }
        func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType {
            try? await Task.sleep(for: gate)
            return await base.containsImage(forKey: key, cacheType: cacheType)
        }
        func clear(_ cacheType: ImageCacheType) async { await base.clear(cacheType) }
    }

    /// A memory-only cache holding `k` as 1, and a cache holding `k` as 2 on its disk only.
    func memoryAndDiskCaches(_ directory: TemporaryDirectory) async throws -> (fast: ImageCache, onDisk: ImageCache) {
        let onDisk = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        try await onDisk.store(try image(2), forKey: "k", cacheType: .disk)
        let fast = memoryOnly()
        try await fast.store(try image(1), forKey: "k", cacheType: .memory)
        return (fast, onDisk)
    }

    @Test func aConcurrentQueryAnswersWithTheFirstHitAndCancelsTheRest() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (fast, onDisk) = try await memoryAndDiskCaches(directory)
        // The highest cache answers from its disk only after a minute; serial asking would wait for it.
        let manager = ImageCachesManager(caches: [fast, SlowCache(base: onDisk, gate: .seconds(60))], queryPolicy: .concurrent)

        let hit = try #require(try await manager.query(forKey: "k", query: ImageCacheQuery()))
        #expect(hit.cacheType == .memory && hit.image.withUnsafeRow(0) { $0[0] } == 1)
        #expect(await manager.containsImage(forKey: "k", cacheType: .all) == .memory)
        let misses = ImageCachesManager(caches: [memoryOnly(), memoryOnly()], queryPolicy: .concurrent)
        #expect(try await misses.query(forKey: "k", query: ImageCacheQuery()) == nil)
        #expect(await misses.containsImage(forKey: "k", cacheType: .all) == ImageCacheType.none)
    }

    /// Both caches answer at once, one from memory, one from disk: the memory hit wins every time
    /// (asked all at once in one pass, the disk read won about two times in three).
    @Test func aConcurrentQueryAnswersAMemoryHitBeforeADiskHit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (fast, onDisk) = try await memoryAndDiskCaches(directory)
        for order in [[fast, onDisk], [onDisk, fast]] {
            let manager = ImageCachesManager(caches: order, queryPolicy: .concurrent)
            for _ in 0..<30 {
                #expect(try await manager.query(forKey: "k", query: ImageCacheQuery())?.cacheType == .memory)
                #expect(await manager.containsImage(forKey: "k", cacheType: .all) == .memory)
            }
            #expect(try await manager.query(forKey: "k", query: ImageCacheQuery(cacheType: .disk))?.cacheType == .disk)
        }
    }

    @Test func aSerialQueryStillPrefersTheHighestCache() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (fast, onDisk) = try await memoryAndDiskCaches(directory)
        let manager = ImageCachesManager(caches: [fast, SlowCache(base: onDisk, gate: .milliseconds(1))], queryPolicy: .serial)
        #expect(try await manager.query(forKey: "k", query: ImageCacheQuery())?.cacheType == .disk)
    }

    @Test func flushRunAndShutdownReachEveryCache() async throws {
        let directories = [TemporaryDirectory(), TemporaryDirectory()]
        defer { directories.forEach { $0.remove() } }
        let caches = directories.map { ImageCache(directory: $0.url, config: ImageCacheConfig(diskSweepInterval: .milliseconds(10))) }
        let observers = caches.map { cache in
            let observer = RecordingObserver()
            cache.observer = observer
            return observer
        }
        let manager = ImageCachesManager(caches: caches)
        for (index, cache) in caches.enumerated() { cache.storeInBackground(try image(UInt8(index)), data: Data([1, 2, 3]), forKey: "k") }
        await manager.flush()
        for cache in caches { #expect(await cache.diskCount() == 1) }
        let running = Task { await manager.run() }
        try await waitUntil { observers.allSatisfy { $0.sweeps.count >= 2 } }
        #expect(observers.allSatisfy { $0.sweeps.count >= 2 }, "run() sweeps every cache")
        running.cancel()
        await running.value
        await manager.shutdown()
        let allShutDown = caches.allSatisfy { $0.isShutDown }
        #expect(allShutDown)
    }
}
