import Foundation
import Testing
@testable import WebImage

@Suite struct ImageCacheTests {
    func makeCache(_ directory: TemporaryDirectory, serializer: any CacheSerializer = DefaultCacheSerializer(),
                   coders: CoderRegistry = .shared, _ configure: (inout ImageCacheConfig) -> Void = { _ in }) -> ImageCache {
        var config = ImageCacheConfig(diskSweepInterval: nil)
        configure(&config)
        return ImageCache(directory: directory.url, config: config, serializer: serializer, coders: coders)
    }

    func opaqueImage() throws -> Image {
        try Image(width: 4, height: 2, pixelFormat: .rgb8, pixels: (0..<24).map { UInt8($0 * 10) })
    }

    func translucentImage() throws -> Image {
        try Image(width: 2, height: 2, pixelFormat: .rgba8, pixels: (0..<16).map { UInt8($0 * 15) })
    }

    func pngData() throws -> Data { try CoderRegistry.shared.encode(try translucentImage(), as: .png) }

    @Test func storeThenQueryHitsMemoryFirst() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let image = try translucentImage()
        try await cache.store(image, data: try pngData(), forKey: "k")
        let hit = try #require(try await cache.query(forKey: "k"))
        #expect(hit.cacheType == .memory && hit.image === image && hit.data == nil)
        #expect(await cache.diskImageExists(forKey: "k"))
        #expect(cache.statistics.memoryHits == 1)
    }

    @Test func clearingMemoryKeepsDiskAndADiskHitIsPromoted() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let data = try pngData()
        try await cache.store(try translucentImage(), data: data, forKey: "k")
        await cache.clear(.memory)
        #expect(cache.imageFromMemory(forKey: "k") == nil)
        let hit = try #require(try await cache.query(forKey: "k"))
        #expect(hit.cacheType == .disk && hit.data == data)
        #expect(hit.image.rgbaSHA256() == (try translucentImage()).rgbaSHA256())
        #expect(cache.imageFromMemory(forKey: "k") === hit.image)
        #expect(cache.statistics.diskHits == 1)
    }

    @Test func aDiskHitIsNotPromotedWhenTheQuerySaysSo() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try translucentImage(), data: try pngData(), forKey: "k", cacheType: .disk)
        #expect(cache.imageFromMemory(forKey: "k") == nil)
        _ = try await cache.query(forKey: "k", query: ImageCacheQuery(promotesToMemory: false))
        #expect(cache.imageFromMemory(forKey: "k") == nil)
    }

    @Test func clearingDiskKeepsMemory() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try opaqueImage(), forKey: "k")
        await cache.clear(.disk)
        #expect(await !cache.diskImageExists(forKey: "k"))
        #expect(cache.imageFromMemory(forKey: "k") != nil)
        #expect(await cache.containsImage(forKey: "k") == .memory)
    }

    @Test func aMemoryOnlyStoreNeverWritesTheDisk() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try opaqueImage(), data: Data([1, 2, 3]), forKey: "k", cacheType: .memory)
        #expect(await cache.diskCount() == 0)
        #expect(directory.files().isEmpty)
        #expect(await cache.containsImage(forKey: "k") == .memory)
    }

    @Test func removingTakesTheImageFromBothTiers() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try opaqueImage(), forKey: "k")
        await cache.removeImage(forKey: "k")
        #expect(await cache.containsImage(forKey: "k") == .none)
        #expect(try await cache.query(forKey: "k") == nil)
        #expect(cache.statistics.misses == 1)
    }

    @Test func anImageWithoutDataIsStoredAsPNGWhenItHasAlphaElseJPEG() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try translucentImage(), forKey: "alpha")
        try await cache.store(try opaqueImage(), forKey: "opaque")
        let alpha = try #require(try await cache.diskCache?.data(forKey: "alpha"))
        let opaque = try #require(try await cache.diskCache?.data(forKey: "opaque"))
        #expect(ImageFormat(sniffing: alpha) == .png)
        #expect(ImageFormat(sniffing: opaque) == .jpeg)
    }

    @Test func anImageWithoutDataKeepsItsSourceFormatWhenEncodable() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let decoded = try CoderRegistry.shared.decode(try CoderRegistry.shared.encode(try opaqueImage(), as: .png))
        #expect(decoded.format == .png)
        try await cache.store(decoded, forKey: "k")
        #expect(ImageFormat(sniffing: try #require(try await cache.diskCache?.data(forKey: "k"))) == .png)
    }

    struct FixedSerializer: CacheSerializer {
        func data(for image: Image, originalData: Data?, key: String) -> Data? { Data("WIMG".utf8) + [99] }
    }

    @Test func aCustomSerializerAndCoderAreUsedForStoreAndQuery() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory, serializer: FixedSerializer(), coders: CoderRegistry(coders: [MarkerCoder()]))
        try await cache.store(try opaqueImage(), data: Data([1, 2, 3]), forKey: "k")
        await cache.clear(.memory)
        let hit = try #require(try await cache.query(forKey: "k"))
        #expect(hit.image.format == MarkerCoder.format)
        #expect(Array(hit.image.pixels) == [99])
    }

    @Test func aDiskFileThatFailsToDecodeIsRemovedAndIsAMiss() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.storeData(Data("not an image".utf8), forKey: "k")
        #expect(try await cache.query(forKey: "k") == nil)
        #expect(await !cache.diskImageExists(forKey: "k"))
        #expect(cache.statistics.corruptFilesRemoved == 1)
    }

    @Test func queryCanReturnTheStoredBytesAndMetadataForAMemoryHit() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let data = try pngData()
        try await cache.store(try translucentImage(), data: data, forKey: "k", metadata: DiskCacheMetadata(entityTag: "e1"))
        #expect(try await cache.query(forKey: "k", query: ImageCacheQuery(includesData: true))?.data == data)
        await cache.clear(.memory)
        #expect(try await cache.query(forKey: "k")?.metadata?.entityTag == "e1")
        await cache.clear(.memory)
        let withoutMetadata = try await cache.query(forKey: "k", query: ImageCacheQuery(includesMetadata: false))
        #expect(withoutMetadata?.cacheType == .disk)
        #expect(withoutMetadata?.metadata == nil)
    }

    @Test func queryHonoursTheTiersItIsGiven() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try translucentImage(), data: try pngData(), forKey: "k")
        #expect(try await cache.query(forKey: "k", query: ImageCacheQuery(cacheType: .disk))?.cacheType == .disk)
        await cache.clear(.disk)
        #expect(try await cache.query(forKey: "k", query: ImageCacheQuery(cacheType: .disk)) == nil)
        #expect(try await cache.query(forKey: "k", query: ImageCacheQuery(cacheType: .none)) == nil)
    }

    @Test func aDiskHitIsDecodedWithTheQuerysOptions() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let large = try Image(width: 200, height: 100, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 60_000))
        try await cache.store(large, data: try CoderRegistry.shared.encode(large, as: .png), forKey: "k", cacheType: .disk)
        let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 50, height: 50))
        let hit = try #require(try await cache.query(forKey: "k", query: ImageCacheQuery(decodeOptions: options, promotesToMemory: false)))
        #expect(hit.image.width == 50 && hit.image.height == 25)
    }

    @Test func withoutAUsableDiskTheMemoryTierStillWorks() async throws {
        let cache = ImageCache(directory: URL(fileURLWithPath: "/etc/hostname/cache"), config: ImageCacheConfig(diskSweepInterval: nil))
        #expect(cache.diskCache == nil)
        #expect(cache.diskError != nil)
        try await cache.store(try opaqueImage(), forKey: "k")
        #expect(try await cache.query(forKey: "k")?.cacheType == .memory)
    }

    @Test func anUnusableDiskFailsTheStoreButNotTheMemoryTier() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        directory.remove()
        #expect(FileManager.default.createFile(atPath: directory.path, contents: Data([0])))   // a file where the directory was
        await #expect(throws: DiskCacheError.self) { try await cache.store(try opaqueImage(), forKey: "k") }
        #expect(cache.imageFromMemory(forKey: "k") != nil)
    }

    @Test func storeInBackgroundPutsTheImageInMemoryAtOnce() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let task = cache.storeInBackground(try opaqueImage(), forKey: "k")
        #expect(cache.imageFromMemory(forKey: "k") != nil)
        try await task.value
        #expect(await cache.diskImageExists(forKey: "k"))
    }

    @Test func memoryPressureEmptiesTheMemoryTier() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try opaqueImage(), forKey: "k", cacheType: .memory)
        let drains = PixelBufferPool.shared.drainCount
        cache.handleMemoryPressure()
        #expect(cache.memoryCache.count == 0)
        // The shared pool is drained; tests running beside this one may refill it at once, so the
        // drain is what is checked (PixelBufferPoolTests: a drain leaves nothing pooled).
        #expect(PixelBufferPool.shared.drainCount > drains)
    }

    @Test func manyTasksStoringAndQueryingTheSameAndDifferentKeys() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory) { $0.maxMemoryCount = 5 }
        let data = try pngData()
        let image = try translucentImage()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<30 {
                        let key = "k\((worker + step) % 10)"
                        try await cache.store(image, data: data, forKey: key)
                        let hit = try await cache.query(forKey: key)
                        #expect(hit?.image.rgbaSHA256() == image.rgbaSHA256())
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(cache.memoryCache.count <= 5)
        #expect(await cache.diskCount() == 10)
    }

    @Test func aThumbnailDecodeOfADiskEntryIsNeverPromotedUnderItsKey() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let full = try Image(width: 64, height: 48, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 64 * 48 * 3))
        try await cache.store(full, data: try CoderRegistry.shared.encode(full, as: .png), forKey: "k", cacheType: .disk)

        let thumbnail = ImageCacheQuery(decodeOptions: DecodeOptions(thumbnailPixelSize: PixelSize(width: 16, height: 16)))
        #expect(try await cache.query(forKey: "k", query: thumbnail)?.image.size == PixelSize(width: 16, height: 12))
        #expect(cache.imageFromMemory(forKey: "k") == nil, "a thumbnail was cached under the full-size key")
        #expect(try await cache.query(forKey: "k")?.image.size == PixelSize(width: 64, height: 48))
        #expect(cache.imageFromMemory(forKey: "k")?.size == PixelSize(width: 64, height: 48), "a full decode is promoted")
    }

    @Test func memoryPressureKeepsImagesStillInUse() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        let held = try opaqueImage()
        try await cache.store(held, forKey: "held", cacheType: .memory)
        try await cache.store(try translucentImage(), forKey: "dropped", cacheType: .memory)

        cache.handleMemoryPressure()
        #expect(cache.memoryCache.count == 0 && cache.memoryCache.totalCost == 0)
        #expect(cache.imageFromMemory(forKey: "dropped") == nil, "nobody holds it: its memory is freed")
        #expect(cache.imageFromMemory(forKey: "held") === held, "an image in use must stay reachable")
        withExtendedLifetime(held) {}
    }

    @Test func anEmptyKeyIsStoredInNoTier() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = makeCache(directory)
        try await cache.store(try opaqueImage(), data: try pngData(), forKey: "")
        try await cache.storeInBackground(try opaqueImage(), forKey: "").value
        #expect(cache.memoryCache.count == 0)
        #expect(await cache.diskCount() == 0)
        #expect(try await cache.query(forKey: "") == nil)
    }
}
