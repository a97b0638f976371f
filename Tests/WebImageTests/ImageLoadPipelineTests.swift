import Foundation
import Testing
@testable import WebImage

/// Keeps the left half of an image and, like a careless custom transformer, forgets where it came
/// from (a new `Image` with the default format and scale).
struct ForgetfulTransformer: ImageTransformer {
    var key: String { "Forgetful" }

    func transform(_ image: Image, forKey key: String) throws -> Image {
        let half = try LeftHalfTransformer().transform(image, forKey: key)
        return try Image(width: half.width, height: half.height, pixelFormat: half.pixelFormat, pixels: half.pixels)
    }
}

/// ``ForgetfulTransformer`` that says so: its output's metadata is its own.
struct MetadataDroppingTransformer: ImageTransformer {
    var key: String { "Dropping" }
    var preservesImageMetadata: Bool { false }

    func transform(_ image: Image, forKey key: String) throws -> Image {
        try ForgetfulTransformer().transform(image, forKey: key)
    }
}

/// The manager's way through the cache tiers (``ImageLoadPipeline``): what is stored where, what a
/// result carries, and which image a key answers with.
@Suite struct ImageLoadPipelineTests {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    func serve(_ path: String, _ body: Data? = nil, type: String = "image/png") {
        server.route(path, TestResponse(headers: [("Content-Type", type)], body: body ?? picture))
    }

    // MARK: Which image a key answers with

    @Test func aThumbnailQueryOfTheCacheDoesNotPoisonTheFullSizeLoad() async throws {
        serve("/poison.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/poison.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        await fixture.cache.clear(.memory)

        let thumbnail = ImageCacheQuery(decodeOptions: DecodeOptions(thumbnailPixelSize: PixelSize(width: 16, height: 16)))
        #expect(try await fixture.cache.query(forKey: url.absoluteString, query: thumbnail)?.image.width == 16)
        let full = try await fixture.manager.loadImage(url: url, options: .fromCacheOnly)
        #expect(full.image.size == PixelSize(width: 64, height: 48), "the full-size key answered with a thumbnail")
        #expect(full.cacheType == .disk)
    }

    @Test func aThumbnailDiskHitIsPromotedUnderTheThumbnailKey() async throws {
        serve("/thumb.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/thumb.png")
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 16, height: 16))
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: context)
        await fixture.cache.clear(.memory)

        #expect(try await fixture.manager.loadImage(url: url, context: context).cacheType == .disk)
        let again = try await fixture.manager.loadImage(url: url, context: context)
        #expect(again.cacheType == .memory && again.image.size == PixelSize(width: 16, height: 12))
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) == nil)
        #expect(server.requestCount(for: "/thumb.png") == 1)
    }

    // MARK: Store tiers

    @Test(arguments: [ImageCacheType.disk, .none])
    func aDiskHitIsPromotedToMemoryOnlyWhenTheStoreTypeIncludesMemory(_ storeCacheType: ImageCacheType) async throws {
        serve("/promote.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/promote.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: WebImageContext(storeCacheType: .disk))
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) == nil)

        let hit = try await fixture.manager.loadImage(url: url, context: WebImageContext(storeCacheType: storeCacheType))
        #expect(hit.cacheType == .disk)
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) == nil, "promoted despite storeCacheType \(storeCacheType)")
        _ = try await fixture.manager.loadImage(url: url)
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) != nil, "the default store type promotes")
    }

    // MARK: Transformed images

    @Test func aTransformedImageKeepsItsSourceFormatAndIsStoredInIt() async throws {
        let jpeg = try encodedPicture(as: .jpeg)
        serve("/meta.jpg", jpeg, type: "image/jpeg")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/meta.jpg")
        let context = WebImageContext(transformer: ForgetfulTransformer(), imageScaleFactor: 2)
        let result = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: context)
        #expect(result.image.format == .jpeg)
        #expect(result.image.scale == 2)
        #expect(result.image.width == 32)
        let key = try #require(fixture.manager.cacheKey(for: url, context: context))
        let stored = try #require(try await fixture.cache.diskCache?.data(forKey: key))
        #expect(ImageFormat(sniffing: stored) == .jpeg)
    }

    @Test func aTransformerCanOptOutOfKeepingMetadata() async throws {
        serve("/dropping.jpg", try encodedPicture(as: .jpeg), type: "image/jpeg")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let result = try await fixture.manager.loadImage(url: server.url("/dropping.jpg"),
                                                         context: WebImageContext(transformer: MetadataDroppingTransformer()))
        #expect(result.image.format == .unknown)
        let pipeline = PipelineTransformer([LeftHalfTransformer(), MetadataDroppingTransformer()])
        #expect(!pipeline.preservesImageMetadata)
        #expect(PipelineTransformer([ForgetfulTransformer()]).preservesImageMetadata)
    }

    @Test func everyStageOfAPipelineKeepsItsInputsMetadata() throws {
        let source = try Image(width: 8, height: 4, pixelFormat: .rgb8, pixels: [UInt8](repeating: 7, count: 96), format: .jpeg, scale: 3)
        let result = try PipelineTransformer([ForgetfulTransformer(), ForgetfulTransformer()]).transform(source, forKey: "k")
        #expect(result.width == 2 && result.format == .jpeg && result.scale == 3)
    }

    // MARK: Key filters that cache nothing

    @Test func aKeyFilterReturningNilCachesNothing() async throws {
        serve("/nokey.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/nokey.png")
        let context = WebImageContext(cacheKeyFilter: ClosureCacheKeyFilter { _ in nil })
        #expect(fixture.manager.cacheKey(for: url, context: context) == nil)

        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: context)
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache,
                                                context: WebImageContext(transformer: LeftHalfTransformer(),
                                                                         cacheKeyFilter: ClosureCacheKeyFilter { _ in "" }))
        #expect(fixture.cache.memoryCache.count == 0)
        #expect(await fixture.cache.diskCount() == 0)
        let second = try await fixture.manager.loadImage(url: url, context: context)
        #expect(second.cacheType == .none)
        #expect(server.requestCount(for: "/nokey.png") == 3)
    }

    @Test func aPrefetchOfBytesWithANilKeyStoresNothing() async throws {
        serve("/prefetch-nokey.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager)
        let token = await prefetcher.prefetch(urls: [server.url("/prefetch-nokey.png")],
                                              context: WebImageContext(cacheKeyFilter: ClosureCacheKeyFilter { _ in nil }),
                                              storesDataOnly: true)
        let outcome = await token.completion()
        #expect(outcome.finishedCount == 0 && outcome.skippedCount == 1)
        #expect(await fixture.cache.diskCount() == 0)
    }

    // MARK: What a result carries

    @Test func aDerivedResultNeverCarriesTheOriginalBytes() async throws {
        serve("/derived.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/derived.png")
        let thumbnail = WebImageContext(thumbnailPixelSize: PixelSize(width: 16, height: 16))
        let downloaded = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: thumbnail)
        #expect(downloaded.cacheType == .none)
        #expect(downloaded.data == nil, "a downloaded thumbnail carried the full-size bytes")
        let transformed = try await fixture.manager.loadImage(url: url, context: WebImageContext(transformer: LeftHalfTransformer()))
        #expect(transformed.data == nil)

        // A disk hit under the thumbnail's own key carries the thumbnail's own bytes.
        await fixture.cache.clear(.memory)
        let fromDisk = try await fixture.manager.loadImage(url: url, context: thumbnail)
        #expect(fromDisk.cacheType == .disk)
        let bytes = try #require(fromDisk.data)
        #expect(try CoderRegistry.shared.decode(bytes).size == fromDisk.image.size)
        // A plain load carries the download.
        await fixture.cache.clear(.all)
        #expect(try await fixture.manager.loadImage(url: url).data == picture)
    }

    // MARK: A cache folder removed while the process runs

    @Test func waitStoreCacheLoadsSucceedAfterTheCacheFolderIsRemoved() async throws {
        serve("/removed.png")
        serve("/after.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        _ = try await fixture.manager.loadImage(url: server.url("/removed.png"), options: .waitStoreCache)
        try FileManager.default.removeItem(at: fixture.directory.url)

        let url = server.url("/after.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == picture)
        #expect(await fixture.cache.diskCount() == 1, "the entry that went with the folder is forgotten")
    }

    // MARK: A cache of its own for originals

    @Test func originalsGoToTheOriginalCacheAndDerivedImagesToTheCache() async throws {
        serve("/split.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let originals = TemporaryDirectory()
        defer { originals.remove() }
        let originalCache = ImageCache(directory: originals.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let url = server.url("/split.png")
        let context = WebImageContext(transformer: LeftHalfTransformer(), originalCache: originalCache)
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: context)

        let key = try #require(fixture.manager.cacheKey(for: url, context: context))
        #expect(try await originalCache.diskCache?.data(forKey: url.absoluteString) == picture)
        #expect(await !fixture.cache.diskImageExists(forKey: url.absoluteString))
        #expect(await fixture.cache.diskImageExists(forKey: key))
        #expect(await !originalCache.diskImageExists(forKey: key))

        // Another transform is derived from the original cache, without the network.
        let flipped = WebImageContext(transformer: FlippingTransformer(horizontal: true), originalCache: originalCache)
        let derived = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: flipped)
        #expect(derived.cacheType == .disk)
        #expect(server.requestCount(for: "/split.png") == 1)
    }
}
