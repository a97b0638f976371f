import Foundation
import Synchronization
import Testing
@testable import WebImage

/// An encoded test picture: a `width`×`height` RGB gradient, varied by `seed` so that two pictures differ.
func encodedPicture(width: Int = 64, height: Int = 48, seed: Int = 0, as format: ImageFormat = .png) throws -> Data {
    var pixels = [UInt8]()
    pixels.reserveCapacity(width * height * 3)
    for y in 0..<height {
        for x in 0..<width {
            pixels += [UInt8(truncatingIfNeeded: x * 4 + seed), UInt8(truncatingIfNeeded: y * 5), UInt8(truncatingIfNeeded: seed * 37)]
        }
    }
    let image = try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    return try CoderRegistry.shared.encode(image, as: format)
}

/// Keeps the left half of an image (a transformer for tests; the real ones are tested on their own).
struct LeftHalfTransformer: ImageTransformer {
    var key: String { "LeftHalf" }

    func transform(_ image: Image, forKey key: String) throws -> Image {
        let width = max(1, image.width / 2)
        var pixels = [UInt8]()
        for y in 0..<image.height {
            image.withUnsafeRow(y) { pixels += $0.prefix(width * image.pixelFormat.bytesPerPixel) }
        }
        return try Image(width: width, height: image.height, pixelFormat: image.pixelFormat, pixels: pixels, format: image.format)
    }
}

/// A transformer that always fails.
struct FailingTransformer: ImageTransformer {
    struct Failure: Error {}
    var key: String { "Failing" }
    func transform(_ image: Image, forKey key: String) throws -> Image { throw Failure() }
}

/// A manager over its own disk cache (in a temporary directory), downloader and file loader.
struct ManagerFixture {
    let directory = TemporaryDirectory()
    let cache: ImageCache
    let downloader: Downloader
    let manager: WebImageManager

    init(config: WebImageManagerConfig = WebImageManagerConfig(), downloaderConfig: DownloaderConfig = DownloaderConfig()) {
        cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        downloader = Downloader(config: downloaderConfig)
        manager = WebImageManager(cache: cache, loader: LoadersManager(loaders: [downloader, FileLoader()]), config: config)
    }
}

/// Decodes the bytes "WANI" to a two-frame 4×2 gray animation (frames of 10s and of 200s).
struct AnimatedCoder: ImageCoder {
    func canDecode(_ data: Data) -> Bool { data == Data("WANI".utf8) }

    func decode(_ data: Data, options: DecodeOptions) throws -> Image {
        let second = try Image(width: 4, height: 2, pixelFormat: .gray8, pixels: [UInt8](repeating: 200, count: 8))
        let storage = try PixelStorage(byteCount: 8)
        storage.bytes.initializeMemory(as: UInt8.self, repeating: 10, count: 8)
        return Image(storage: storage, width: 4, height: 2, pixelFormat: .gray8, bytesPerRow: 4,
                     laterFrames: [ImageFrame(image: second, duration: .milliseconds(200))], firstFrameDuration: .milliseconds(100))
    }

    func canEncode(_ format: ImageFormat) -> Bool { false }

    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data {
        throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
    }
}

@Suite struct WebImageManagerTests {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    func serve(_ path: String, _ body: Data? = nil, headers: [(String, String)] = [("Content-Type", "image/png")]) {
        server.route(path, TestResponse(headers: headers, body: body ?? picture))
    }

    // MARK: The flow (SDWebImage manager tests 02, 03)

    @Test func downloadsDecodesStoresAndThenServesFromMemoryAndDisk() async throws {
        serve("/a.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/a.png")
        let first = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(first.cacheType == .none)
        #expect(first.image.size == PixelSize(width: 64, height: 48))
        #expect(first.data == picture)
        #expect(first.url == url)
        let second = try await fixture.manager.loadImage(url: url)
        #expect(second.cacheType == .memory)
        #expect(second.image === first.image)
        await fixture.cache.clear(.memory)
        let third = try await fixture.manager.loadImage(url: url)
        #expect(third.cacheType == .disk)
        #expect(third.data == picture)
        #expect(third.image.rgbaSHA256() == first.image.rgbaSHA256())
        #expect(server.requestCount(for: "/a.png") == 1)
        let statistics = fixture.manager.statistics
        #expect(statistics.loads == 3 && statistics.memoryHits == 1 && statistics.diskHits == 1 && statistics.downloads == 1)
    }

    @Test func aNilOrEmptyURLThrowsInvalidURL() async throws {
        let manager = ManagerFixture().manager
        await #expect(throws: WebImageError.invalidURL(nil)) { try await manager.loadImage(url: nil) }
        await #expect(throws: WebImageError.self) { try await manager.loadImage(url: "") }
        await #expect(throws: WebImageError.self) { try await manager.loadImage(url: URL(string: "ftp://example.com/a.png")) }
    }

    @Test func fileAndDataURLsLoadThroughTheDefaultLoaders() async throws {
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let file = fixture.directory.url.appendingPathComponent("local.png")
        try picture.write(to: file)
        #expect(try await fixture.manager.loadImage(url: file).image.width == 64)
        let dataURL = URL(string: "data:image/png;base64," + picture.base64EncodedString())!
        #expect(try await fixture.manager.loadImage(url: dataURL).image.height == 48)
    }

    // MARK: Options

    @Test func fromCacheOnlyNeverDownloads() async throws {
        serve("/cacheonly.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/cacheonly.png")
        await #expect(throws: WebImageError.notInCache(url: url)) {
            try await fixture.manager.loadImage(url: url, options: .fromCacheOnly)
        }
        #expect(server.requestCount(for: "/cacheonly.png") == 0)
        #expect(!fixture.manager.isFailedURL(url))
        _ = try await fixture.manager.loadImage(url: url)
        #expect(try await fixture.manager.loadImage(url: url, options: .fromCacheOnly).cacheType == .memory)
    }

    @Test func fromLoaderOnlySkipsTheCacheButStillStores() async throws {
        serve("/loaderonly.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/loaderonly.png")
        _ = try await fixture.manager.loadImage(url: url)
        let again = try await fixture.manager.loadImage(url: url, options: .fromLoaderOnly)
        #expect(again.cacheType == .none)
        #expect(server.requestCount(for: "/loaderonly.png") == 2)
    }

    @Test func cacheMemoryOnlyNeverWritesToDisk() async throws {
        serve("/memonly.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/memonly.png")
        _ = try await fixture.manager.loadImage(url: url, options: [.cacheMemoryOnly, .waitStoreCache])
        #expect(await fixture.cache.containsImage(forKey: url.absoluteString) == .memory)
        #expect(await !fixture.cache.diskImageExists(forKey: url.absoluteString))
    }

    @Test func waitStoreCacheReturnsAfterTheDiskWrite() async throws {
        serve("/wait.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/wait.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(await fixture.cache.diskImageExists(forKey: url.absoluteString))
    }

    @Test func queryMemoryDataReturnsTheStoredBytesForAMemoryHit() async throws {
        serve("/memdata.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/memdata.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(try await fixture.manager.loadImage(url: url).data == nil)
        let withData = try await fixture.manager.loadImage(url: url, options: .queryMemoryData)
        #expect(withData.cacheType == .memory)
        #expect(withData.data == picture)
    }

    @Test func queryAndStoreCacheTypesChooseTheTiers() async throws {
        serve("/tiers.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/tiers.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: WebImageContext(storeCacheType: .disk))
        #expect(await fixture.cache.containsImage(forKey: url.absoluteString) == .disk)
        let diskOnly = try await fixture.manager.loadImage(url: url, context: WebImageContext(queryCacheType: .disk, storeCacheType: .none))
        #expect(diskOnly.cacheType == .disk)
        let none = try await fixture.manager.loadImage(url: url, context: WebImageContext(queryCacheType: .none, storeCacheType: .none))
        #expect(none.cacheType == .none)
        #expect(server.requestCount(for: "/tiers.png") == 2)
    }

    @Test func priorityCookiesAndHeadersReachTheLoader() async throws {
        serve("/headers.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let context = WebImageContext(requestModifier: { request in
            var request = request
            request.setValue("yes", forHTTPHeaderField: "X-Modified")
            return request
        }, httpHeaders: ["X-Extra": "1"])
        _ = try await fixture.manager.loadImage(url: server.url("/headers.png"), options: [.highPriority, .handleCookies], context: context)
        let headers = try #require(server.requests(for: "/headers.png").first).headers
        #expect(headers["x-modified"] == "yes")
        #expect(headers["x-extra"] == "1")
    }

    @Test func aResponseModifierCanRefuseAResponse() async throws {
        serve("/refused.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/refused.png")
        await #expect(throws: WebImageError.self) {
            try await fixture.manager.loadImage(url: url, context: WebImageContext(responseModifier: { _ in nil }))
        }
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func allowInvalidSSLCertificatesIsAClearErrorForHTTPS() async throws {
        let manager = ManagerFixture().manager
        let url = URL(string: "https://127.0.0.1:1/a.png")!
        do {
            _ = try await manager.loadImage(url: url, options: .allowInvalidSSLCertificates)
            Issue.record("expected unsupportedOption")
        } catch let error as WebImageError {
            guard case .unsupportedOption(let name, url) = error else { Issue.record("got \(error)"); return }
            #expect(name.hasPrefix("allowInvalidSSLCertificates"))
        }
        serve("/plain.png")
        #expect(try await manager.loadImage(url: server.url("/plain.png"), options: .allowInvalidSSLCertificates).image.width == 64)
    }

    @Test func scaleDownLargeImagesLimitsThePixelCount() async throws {
        serve("/large.png", try encodedPicture(width: 200, height: 100))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let result = try await fixture.manager.loadImage(url: server.url("/large.png"), options: .scaleDownLargeImages,
                                                         context: WebImageContext(scaleDownLimitBytes: 50 * 25 * 4))
        #expect(result.image.size.pixelCount <= 50 * 25)
        #expect(result.image.width == 50)
    }

    @Test func anAt2xFileNameMeansScaleTwoUnlessTheContextSaysOtherwise() async throws {
        serve("/icon@2x.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/icon@2x.png")
        #expect(try await fixture.manager.loadImage(url: url).image.scale == 2)
        let custom = try await fixture.manager.loadImage(url: url, options: .fromLoaderOnly, context: WebImageContext(imageScaleFactor: 3))
        #expect(custom.image.scale == 3)
    }

    @Test func theDecryptorRunsBeforeDecoding() async throws {
        let scrambled = Data(picture.map { $0 ^ 0x5A })
        serve("/secret.png", scrambled)
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let context = WebImageContext(decryptor: { data, _ in Data(data.map { $0 ^ 0x5A }) })
        let result = try await fixture.manager.loadImage(url: server.url("/secret.png"), context: context)
        #expect(result.image.width == 64)
        #expect(result.data == picture)
    }

    // MARK: Cache keys, thumbnails and transforms (manager tests 15, 17, 18, 19, 21)

    @Test func cacheKeysInsertThumbnailAndTransformerPartsBeforeTheExtension() {
        let manager = ManagerFixture().manager
        let url = URL(string: "https://example.com/path/image.png?size=1#frag")!
        #expect(manager.cacheKey(for: url) == url.absoluteString)
        #expect(manager.cacheKey(for: url, context: WebImageContext(transformer: LeftHalfTransformer()))
                == "https://example.com/path/image-LeftHalf.png?size=1#frag")
        #expect(manager.cacheKey(for: url, context: WebImageContext(thumbnailPixelSize: PixelSize(width: 100, height: 50)))
                == "https://example.com/path/image-Thumbnail(100,50,1).png?size=1#frag")
        #expect(manager.cacheKey(for: url, context: WebImageContext(transformer: LeftHalfTransformer(),
                                                                   thumbnailPixelSize: PixelSize(width: 8, height: 8),
                                                                   preservesAspectRatio: false))
                == "https://example.com/path/image-Thumbnail(8,8,0)-LeftHalf.png?size=1#frag")
        #expect(manager.cacheKey(for: URL(string: "https://example.com/noext")!, context: WebImageContext(transformer: LeftHalfTransformer()))
                == "https://example.com/noext-LeftHalf")
        let pipeline = PipelineTransformer([ResizingTransformer(size: PixelSize(width: 100, height: 100)), FlippingTransformer(vertical: true)])
        #expect(manager.cacheKey(for: url, context: WebImageContext(transformer: pipeline))
                == "https://example.com/path/image-ResizingTransformer(100x100,fill)-FlippingTransformer(0,1).png?size=1#frag")
        #expect(manager.cacheKey(for: url, context: WebImageContext(transformer: PipelineTransformer([]))) == url.absoluteString)
        let filter = ClosureCacheKeyFilter { url in url.absoluteString.components(separatedBy: "?").first }
        #expect(manager.cacheKey(for: url, context: WebImageContext(cacheKeyFilter: filter)) == "https://example.com/path/image.png")
    }

    @Test func contextsAreValuesAndSettingAPropertyLaterChangesTheKeyAndTheCache() async throws {
        serve("/later.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/later.png")
        let full = try await fixture.manager.loadImage(url: url)
        #expect(full.image.width == 64)

        let plain = WebImageContext()
        var thumbnail = plain
        thumbnail.thumbnailPixelSize = PixelSize(width: 8, height: 8)
        #expect(plain.thumbnailPixelSize == nil)
        #expect(fixture.manager.cacheKey(for: url, context: thumbnail) != fixture.manager.cacheKey(for: url, context: plain))
        // The memory tier holds the full-size image under the plain key: a thumbnail set after
        // creating the context must not be answered with it.
        #expect(try await fixture.manager.loadImage(url: url, context: thumbnail).image.width == 8)

        var transformed = WebImageContext()
        transformed.transformer = LeftHalfTransformer()
        #expect(try await fixture.manager.loadImage(url: url, context: transformed).image.width == 32)

        let otherDirectory = TemporaryDirectory()
        defer { otherDirectory.remove() }
        let other = ImageCache(directory: otherDirectory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        var overridden = WebImageContext()
        overridden.cache = other
        // A cache set on the context replaces the manager's, even for memory hits.
        await #expect(throws: WebImageError.self) {
            try await fixture.manager.loadImage(url: url, options: .fromCacheOnly, context: overridden)
        }
        #expect(try await fixture.manager.loadImage(url: url, options: .fromCacheOnly).cacheType == .memory)
    }

    @Test func aCacheKeyFilterMakesVariantsShareOneEntry() async throws {
        server.route("/signed.png", TestResponse(headers: [("Content-Type", "image/png")], body: picture))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let filter = ClosureCacheKeyFilter { url in url.absoluteString.components(separatedBy: "?").first }
        let context = WebImageContext(cacheKeyFilter: filter)
        _ = try await fixture.manager.loadImage(url: server.url("/signed.png?sig=1"), context: context)
        let second = try await fixture.manager.loadImage(url: server.url("/signed.png?sig=2"), context: context)
        #expect(second.cacheType == .memory)
        #expect(server.requestCount(for: "/signed.png") == 1)
    }

    @Test func aTransformedLoadIsCachedUnderItsOwnKeyAndTheOriginalBytesOnDisk() async throws {
        serve("/transform.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/transform.png")
        let context = WebImageContext(transformer: LeftHalfTransformer())
        let result = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: context)
        #expect(result.image.width == 32)
        let key = try #require(fixture.manager.cacheKey(for: url, context: context))
        #expect(fixture.cache.imageFromMemory(forKey: key)?.width == 32)
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == picture)
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) == nil)   // originalStoreCacheType is .disk
    }

    @Test func aThumbnailIsDerivedFromTheOriginalOnDiskWithoutTheNetwork() async throws {
        serve("/original.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/original.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        let originalFile = try #require(fixture.cache.cachePath(forKey: url.absoluteString))
        let before = try FileManager.default.attributesOfItem(atPath: originalFile)[.modificationDate] as? Date
        await fixture.cache.clear(.memory)
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 16, height: 16))
        let thumbnail = try await fixture.manager.loadImage(url: url, options: .waitStoreCache, context: context)
        #expect(thumbnail.image.size == PixelSize(width: 16, height: 12))
        #expect(thumbnail.data == nil)
        #expect(thumbnail.cacheType == .disk)
        #expect(server.requestCount(for: "/original.png") == 1)
        #expect(fixture.manager.statistics.derivedFromOriginal == 1)
        let thumbnailKey = try #require(fixture.manager.cacheKey(for: url, context: context))
        #expect(await fixture.cache.diskImageExists(forKey: thumbnailKey))
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) == nil)
        #expect(try FileManager.default.attributesOfItem(atPath: originalFile)[.modificationDate] as? Date == before)
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == picture)
    }

    @Test func aTransformIsDerivedFromTheOriginalOnDisk() async throws {
        serve("/derive.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/derive.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        let transformed = try await fixture.manager.loadImage(url: url, context: WebImageContext(transformer: LeftHalfTransformer()))
        #expect(transformed.image.width == 32)
        #expect(transformed.data == nil)
        #expect(server.requestCount(for: "/derive.png") == 1)
    }

    @Test func tenThumbnailSizesOfOneURLShareOneRequest() async throws {
        let gate = Gate()
        server.route("/sizes.png") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/sizes.png")
        let results = try await withThrowingTaskGroup(of: (Int, PixelSize).self) { group in
            for side in 1...10 {
                group.addTask {
                    let context = WebImageContext(thumbnailPixelSize: PixelSize(width: side * 4, height: side * 4))
                    return (side, try await fixture.manager.loadImage(url: url, context: context).image.size)
                }
            }
            try await waitUntil { fixture.downloader.callerCount(for: ImageLoadRequest(url: url)) == 10 }
            gate.open()
            return try await group.reduce(into: [Int: PixelSize]()) { $0[$1.0] = $1.1 }
        }
        #expect(server.requestCount(for: "/sizes.png") == 1)
        for side in 1...10 {
            #expect(results[side]?.width == side * 4)
        }
    }

    @Test func animatedImagesAreTransformedOnlyWithTransformAnimatedImage() async throws {
        serve("/animated.wani", Data("WANI".utf8), headers: [("Content-Type", "application/octet-stream")])
        serve("/animated-too.wani", Data("WANI".utf8), headers: [("Content-Type", "application/octet-stream")])
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let manager = WebImageManager(cache: fixture.cache, loader: fixture.downloader, coders: CoderRegistry(coders: [AnimatedCoder()]))
        let url = server.url("/animated.wani")
        let context = WebImageContext(transformer: ResizingTransformer(size: PixelSize(width: 2, height: 1)))
        let untouched = try await manager.loadImage(url: url, options: .cacheMemoryOnly, context: context)
        #expect(untouched.image.size == PixelSize(width: 4, height: 2) && untouched.image.frames.count == 2)
        let transformed = try await manager.loadImage(url: server.url("/animated-too.wani"), options: [.cacheMemoryOnly, .transformAnimatedImage], context: context)
        #expect(transformed.image.frames.map(\.image.size) == [PixelSize(width: 2, height: 1), PixelSize(width: 2, height: 1)])
        #expect(transformed.image.frames.map(\.duration) == [.milliseconds(100), .milliseconds(200)])
        // Each frame is its own average: 10s stay 10, 200s stay 200.
        #expect(Array(transformed.image.frames[1].image.pixels) == [200, 200])
    }

    @Test func aFailingTransformerIsATypedErrorAndDoesNotBlockTheURL() async throws {
        serve("/failtransform.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/failtransform.png")
        do {
            _ = try await fixture.manager.loadImage(url: url, context: WebImageContext(transformer: FailingTransformer()))
            Issue.record("expected transformFailed")
        } catch let error as WebImageError {
            guard case .transformFailed(url, _) = error else { Issue.record("got \(error)"); return }
        }
        #expect(!fixture.manager.isFailedURL(url))
    }

    // MARK: Refresh (manager test 13)

    @Test func refreshCachedDeliversTheCachedImageFirstAndKeepsItOn304() async throws {
        server.route("/etag.png") { [picture] request in
            if request.headers["if-none-match"] == "\"v1\"" { return TestResponse(status: 304) }
            return TestResponse(headers: [("Content-Type", "image/png"), ("ETag", "\"v1\"")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/etag.png")
        let first = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        var events: [ImageLoadEvent] = []
        for try await event in fixture.manager.imageEvents(url: url, options: .refreshCached) { events.append(event) }
        #expect(events.count == 2)
        guard case .cachedImage(let cached) = events.first, case .finished(let final) = events.last else {
            Issue.record("expected cachedImage then finished, got \(events)")
            return
        }
        #expect(cached.image === first.image)
        #expect(final.image === first.image)
        #expect(server.requests(for: "/etag.png").last?.headers["if-none-match"] == "\"v1\"")
        #expect(server.requestCount(for: "/etag.png") == 2)
        #expect(fixture.manager.statistics.notModified == 1)
    }

    @Test func refreshCachedReturnsTheNewImageWhenTheContentChanged() async throws {
        let changed = try encodedPicture(width: 10, height: 10, seed: 9)
        server.route("/changing.png", sequence: [
            TestResponse(headers: [("Content-Type", "image/png"), ("Last-Modified", "Mon, 02 Nov 2026 10:00:00 GMT")], body: picture),
            TestResponse(headers: [("Content-Type", "image/png")], body: changed),
        ])
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/changing.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        let refreshed = try await fixture.manager.loadImage(url: url, options: [.refreshCached, .waitStoreCache])
        #expect(refreshed.cacheType == .none)
        #expect(refreshed.image.width == 10)
        #expect(server.requests(for: "/changing.png").last?.headers["if-modified-since"] == "Mon, 02 Nov 2026 10:00:00 GMT")
        #expect(try await fixture.manager.loadImage(url: url).image.width == 10)
    }

    // MARK: Failed URLs and retries (manager tests 07, 08)

    @Test func permanentFailuresBlockTheURLUntilRetryFailedSucceeds() async throws {
        server.route("/flaky.png", sequence: [
            .text("missing", status: 404),
            TestResponse(headers: [("Content-Type", "image/png")], body: picture),
        ])
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/flaky.png")
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: url) }
        #expect(fixture.manager.isFailedURL(url))
        await #expect(throws: WebImageError.blockedURL(url)) { try await fixture.manager.loadImage(url: url) }
        #expect(server.requestCount(for: "/flaky.png") == 1)
        _ = try await fixture.manager.loadImage(url: url, options: .retryFailed)
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func undecodableDataBlocksTheURL() async throws {
        serve("/garbage.png", Data("not an image at all".utf8))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/garbage.png")
        do {
            _ = try await fixture.manager.loadImage(url: url)
            Issue.record("expected decodingFailed")
        } catch let error as WebImageError {
            guard case .decodingFailed(_, url) = error else { Issue.record("got \(error)"); return }
        }
        #expect(fixture.manager.isFailedURL(url))
        #expect(await fixture.cache.containsImage(forKey: url.absoluteString) == .none)
        fixture.manager.removeFailedURL(url)
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func transientFailuresNeverBlock() async throws {
        server.route("/busy.png", .text("busy", status: 503))
        server.route("/slow.png", TestResponse(body: picture, delayBeforeHeaders: .seconds(2)))
        let fixture = ManagerFixture(downloaderConfig: DownloaderConfig(downloadTimeout: .milliseconds(200)))
        defer { fixture.directory.remove() }
        for path in ["/busy.png", "/slow.png", "/429.png"] {
            if path == "/429.png" { server.route(path, .text("slow down", status: 429)) }
            await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: server.url(path)) }
            #expect(!fixture.manager.isFailedURL(server.url(path)))
        }
    }

    @Test func blocklistEntriesExpire() async throws {
        server.route("/gone.png", .text("gone", status: 410))
        let fixture = ManagerFixture(config: WebImageManagerConfig(failedURLBlockDuration: .milliseconds(1)))
        defer { fixture.directory.remove() }
        let url = server.url("/gone.png")
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: url) }
        try await waitUntil { !fixture.manager.isFailedURL(url) }
        #expect(!fixture.manager.isFailedURL(url))
        fixture.manager.updateConfig { $0.failedURLBlockDuration = .zero }
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: url) }
        #expect(!fixture.manager.isFailedURL(url))
        #expect(server.requestCount(for: "/gone.png") == 2)
    }

    @Test func removeAllFailedURLsEmptiesTheBlocklist() async throws {
        server.route("/x1.png", .text("no", status: 404))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: server.url("/x1.png")) }
        fixture.manager.removeAllFailedURLs()
        #expect(!fixture.manager.isFailedURL(server.url("/x1.png")))
    }

    @Test func theRetryPolicyRetriesTransientFailuresHonouringRetryAfter() async throws {
        server.route("/retry.png", sequence: [
            TestResponse(status: 503, headers: [("Retry-After", "0")], body: Data("busy".utf8)),
            TestResponse(status: 500, body: Data("oops".utf8)),
            TestResponse(headers: [("Content-Type", "image/png")], body: picture),
        ])
        let policy = RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1))
        let fixture = ManagerFixture(config: WebImageManagerConfig(retryPolicy: policy))
        defer { fixture.directory.remove() }
        let result = try await fixture.manager.loadImage(url: server.url("/retry.png"))
        #expect(result.image.width == 64)
        #expect(server.requestCount(for: "/retry.png") == 3)
        #expect(fixture.manager.statistics.downloads == 3)
    }

    @Test func permanentFailuresAreNotRetried() async throws {
        server.route("/notfound.png", .text("no", status: 404))
        let fixture = ManagerFixture(config: WebImageManagerConfig(retryPolicy: RetryPolicy(initialDelay: .milliseconds(1))))
        defer { fixture.directory.remove() }
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: server.url("/notfound.png")) }
        #expect(server.requestCount(for: "/notfound.png") == 1)
    }

    // MARK: Hooks

    @Test func shouldDownloadCanRefuseADownload() async throws {
        serve("/refuse.png")
        let fixture = ManagerFixture(config: WebImageManagerConfig(shouldDownload: { !$0.path.contains("refuse") }))
        defer { fixture.directory.remove() }
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: server.url("/refuse.png")) }
        #expect(server.requestCount(for: "/refuse.png") == 0)
    }

    @Test func theOptionsProcessorRewritesOptionsAndContext() async throws {
        serve("/processed.png")
        let fixture = ManagerFixture(config: WebImageManagerConfig(optionsProcessor: { _, options, context in
            options.insert(.waitStoreCache)
            context.thumbnailPixelSize = PixelSize(width: 8, height: 8)
        }))
        defer { fixture.directory.remove() }
        let result = try await fixture.manager.loadImage(url: server.url("/processed.png"))
        #expect(result.image.width == 8)
    }

    // MARK: Coalescing and cancellation (manager tests 06, 09, 10, 12)

    @Test func concurrentLoadsOfOneKeyShareOneDownloadAndOneDecode() async throws {
        let gate = Gate()
        server.route("/shared.png") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/shared.png")
        let images = try await withThrowingTaskGroup(of: Image.self) { group in
            for _ in 0..<20 { group.addTask { try await fixture.manager.loadImage(url: url).image } }
            try await waitUntil { fixture.manager.callerCount(url: url) == 20 }
            gate.open()
            return try await group.reduce(into: [Image]()) { $0.append($1) }
        }
        #expect(images.count == 20)
        #expect(images.allSatisfy { $0 === images[0] })
        #expect(server.requestCount(for: "/shared.png") == 1)
        #expect(fixture.manager.statistics.joins == 19)
    }

    @Test func aThousandLoadsOfAHundredURLsMakeExactlyAHundredRequests() async throws {
        server.route("/many/*", TestResponse(headers: [("Content-Type", "image/png")], body: picture))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<1000 {
                group.addTask { _ = try await fixture.manager.loadImage(url: server.url("/many/\(index % 100).png")) }
            }
            try await group.waitForAll()
        }
        #expect(server.totalRequestCount == 100)
        #expect(!fixture.manager.isRunning)
    }

    @Test func cancellingOneOfSeveralCallersLeavesTheOthersTheirResult() async throws {
        let gate = Gate()
        server.route("/several.png") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/several.png")
        let cancelled = Task { try await fixture.manager.loadImage(url: url) }
        let others = (0..<2).map { _ in Task { try await fixture.manager.loadImage(url: url) } }
        try await waitUntil { fixture.manager.callerCount(url: url) == 3 }
        cancelled.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await cancelled.value }
        #expect(fixture.manager.callerCount(url: url) == 2)
        gate.open()
        for task in others { #expect(try await task.value.image.width == 64) }
        #expect(server.requestCount(for: "/several.png") == 1)
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func cancellingTheOnlyCallerCancelsTheDownloadAndANewLoadStartsCleanly() async throws {
        // 100 s of drip: the cancel lands mid-body, and the server sees the hang-up before the body
        // could end, however slowly a loaded machine runs this test (6 s of drip once was not enough).
        server.route("/drip.png", TestResponse(headers: [("Content-Type", "image/png")], body: Data(count: 20_000),
                                               drip: (chunkSize: 20, interval: .milliseconds(100))))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/drip.png")
        let task = Task { try await fixture.manager.loadImage(url: url) }
        try await waitUntil { server.bytesSent(for: "/drip.png") > 0 }
        task.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await task.value }
        try await waitUntil { server.closedByClientCount(for: "/drip.png") == 1 }
        #expect(server.closedByClientCount(for: "/drip.png") == 1)
        server.route("/drip.png", TestResponse(headers: [("Content-Type", "image/png")], body: picture))
        #expect(try await fixture.manager.loadImage(url: url).image.width == 64)
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func cancelAllFailsEveryLoadUnderWay() async throws {
        let gate = Gate()
        server.route("/hold/*") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let tasks = (0..<3).map { index in Task { try await fixture.manager.loadImage(url: server.url("/hold/\(index).png")) } }
        try await waitUntil { server.totalRequestCount == 3 }
        #expect(fixture.manager.isRunning)
        fixture.manager.cancelAll()
        for task in tasks { await #expect(throws: WebImageError.self) { try await task.value } }
        #expect(!fixture.manager.isRunning)
        gate.open()
    }

    // MARK: Events

    @Test func progressiveLoadsDeliverPartialImagesThenOneFinalResult() async throws {
        let large = try encodedPicture(width: 300, height: 300, seed: 3, as: .jpeg)
        server.route("/progressive.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: large,
                                                      drip: (chunkSize: 2000, interval: .milliseconds(20))))
        let fixture = ManagerFixture(config: WebImageManagerConfig(partialImageInterval: .zero))
        defer { fixture.directory.remove() }
        var partials = 0
        var progress: [Int] = []
        var finals: [ImageResult] = []
        for try await event in fixture.manager.imageEvents(url: server.url("/progressive.jpg"), options: .progressiveLoad) {
            switch event {
            case .partialImage(let image): partials += 1; #expect(image.size == PixelSize(width: 300, height: 300))
            case .progress(let received, _): progress.append(received)
            case .finished(let result): finals.append(result)
            case .cachedImage: Issue.record("nothing was cached")
            }
        }
        #expect(partials >= 1)
        #expect(progress == progress.sorted() && progress.last == large.count)
        #expect(finals.count == 1)
        #expect(finals.first?.image.rgbaSHA256() == (try CoderRegistry.shared.decode(large)).rgbaSHA256())
    }

    @Test func everyOptionCombinationEndsInExactlyOneFinalResultOrOneError() async throws {
        serve("/combo.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let flags: [WebImageOptions] = [.refreshCached, .fromCacheOnly, .fromLoaderOnly, .progressiveLoad, .waitStoreCache,
                                        .cacheMemoryOnly, .queryMemoryData, .scaleDownLargeImages]
        for mask in 0..<(1 << flags.count) {
            var options: WebImageOptions = [.retryFailed]
            for (bit, flag) in flags.enumerated() where mask & (1 << bit) != 0 { options.insert(flag) }
            var finals = 0
            var failed = false
            do {
                for try await event in fixture.manager.imageEvents(url: server.url("/combo.png"), options: options) {
                    if case .finished = event { finals += 1 }
                }
            } catch {
                failed = true
            }
            #expect(finals + (failed ? 1 : 0) == 1, "options \(options.rawValue)")
        }
    }

    @Test func endingTheEventStreamEarlyCancelsTheLoad() async throws {
        // 100 s of drip: the stream is left mid-body however slowly a loaded machine runs this test.
        server.route("/endearly.png", TestResponse(headers: [("Content-Type", "image/png")], body: Data(count: 20_000),
                                                   drip: (chunkSize: 20, interval: .milliseconds(100))))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        for try await event in fixture.manager.imageEvents(url: server.url("/endearly.png")) {
            if case .progress = event { break }
        }
        try await waitUntil { server.closedByClientCount(for: "/endearly.png") == 1 }
        #expect(server.closedByClientCount(for: "/endearly.png") == 1)
        try await waitUntil { !fixture.manager.isRunning }
        #expect(!fixture.manager.isRunning)
    }
}
