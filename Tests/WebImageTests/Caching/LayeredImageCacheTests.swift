import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A new shared tier is one conformance: this one keeps bytes in a dictionary (25 lines), and the layered
/// cache gives it everything Redis and S3 have (query, promote, decode fallback, store, flush, reports).
final class DictionaryTier: SharedCacheTier {
    private let entries = Mutex([String: CachedData]())
    private let reads = Atomic<Int>(0)
    let writesInBackground: Bool
    let name: String

    init(name: String = "dictionary", writesInBackground: Bool = false) { (self.name, self.writesInBackground) = (name, writesInBackground) }

    var report: SharedTierReport {
        var report = SharedTierReport(name: name)
        report.hits = reads.load(ordering: .relaxed)
        return report
    }
    func value(forKey key: String) async -> CachedData? {
        guard let entry = entries.withLock({ $0[key] }) else { return nil }
        reads.add(1, ordering: .relaxed)
        return entry
    }
    @discardableResult
    func setValue(_ data: Data, metadata: DiskCacheMetadata?, forKey key: String) async -> Bool {
        entries.withLock { $0[key] = CachedData(data: data, metadata: metadata) }
        return true
    }
    func removeValue(forKey key: String) async { _ = entries.withLock { $0.removeValue(forKey: key) } }
    func containsValue(forKey key: String) async -> Bool { entries.withLock { $0[key] != nil } }
    @discardableResult
    func removeAll() async -> Int { entries.withLock { entries in defer { entries.removeAll() }; return entries.count } }
}

@Suite struct LayeredImageCacheTests {
    func local(_ directory: TemporaryDirectory, _ name: String) -> ImageCache {
        ImageCache(directory: directory.url.appendingPathComponent(name), config: ImageCacheConfig(diskSweepInterval: nil))
    }

    @Test(arguments: [false, true])
    func aTierHitIsDecodedFromItsBytesAndPromotedInTheBackground(writesInBackground: Bool) async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tier = DictionaryTier(writesInBackground: writesInBackground)
        let first = LayeredImageCache(inner: local(directory, "a"), tier: tier)
        let picture = try encodedPicture()
        try await first.storeData(picture, forKey: "k", metadata: DiskCacheMetadata(entityTag: "\"e\"", pixelSize: PixelSize(width: 64, height: 48)))
        await first.flush()
        #expect(await tier.containsValue(forKey: "k"), "the store reached the tier")
        let second = LayeredImageCache(inner: local(directory, "b"), tier: tier)
        let hit = try #require(try await second.query(forKey: "k", query: ImageCacheQuery()))
        #expect(hit.cacheType == .disk && hit.source == .sharedTier("dictionary") && hit.image.size == PixelSize(width: 64, height: 48))
        #expect(hit.metadata?.entityTag == "\"e\"" && second.sharedTierReports.map(\.name) == ["dictionary"])
        #expect(second.localCache.imageFromMemory(forKey: "k") != nil, "the decoded image is in memory at once")
        await second.flush()
        #expect(await second.localCache.diskImageExists(forKey: "k"), "its bytes reached the local disk in the background")
        #expect(try await second.query(forKey: "k", query: ImageCacheQuery())?.source == .memory, "then a local hit")
        let third = LayeredImageCache(inner: local(directory, "b"), tier: tier)
        #expect(try await third.query(forKey: "k", query: ImageCacheQuery())?.source == .disk, "from the local disk once memory is gone")
    }

    @Test func undecodableBytesInTheTierAreDeletedAndAMiss() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let tier = DictionaryTier()
        await tier.setValue(Data("not an image".utf8), metadata: nil, forKey: "bad")
        let cache = LayeredImageCache(inner: local(directory, "c"), tier: tier)
        #expect(try await cache.query(forKey: "bad", query: ImageCacheQuery()) == nil)
        #expect(await !tier.containsValue(forKey: "bad"))
        #expect(await cache.containsImage(forKey: "bad", cacheType: .all) == .none)
    }

    /// Layered twice (a tier in front of another, as Redis before an object store): a hit in the back tier is
    /// promoted through the front one, and the reports come nearest first.
    @Test func aBackTierHitIsPromotedThroughTheFrontTier() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (front, back) = (DictionaryTier(name: "front"), DictionaryTier(name: "back", writesInBackground: true))
        await back.setValue(try encodedPicture(), metadata: nil, forKey: "k")
        let cache = LayeredImageCache(inner: LayeredImageCache(inner: local(directory, "d"), tier: front), tier: back)
        #expect(try await cache.query(forKey: "k", query: ImageCacheQuery())?.source == .sharedTier("back"), "the hit names the tier it came from")
        await cache.flush()
        #expect(await front.containsValue(forKey: "k"), "promoted into the front tier")
        let elsewhere = LayeredImageCache(inner: LayeredImageCache(inner: local(directory, "e"), tier: front), tier: back)
        #expect(try await elsewhere.query(forKey: "k", query: ImageCacheQuery())?.source == .sharedTier("front"),
                "another process finds it in the front tier")
        #expect(await cache.localCache.diskImageExists(forKey: "k"), "and the local disk")
        #expect(cache.sharedTierReports.count == 2)
        await cache.clear(.all)
        let (inBack, inFront) = (await back.containsValue(forKey: "k"), await front.containsValue(forKey: "k"))
        #expect(!inBack && !inFront)
    }
}
