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
}
