import Foundation
import Testing
@testable import WebImage

/// Cache keys, thumbnails and transforms (SDWebImage manager tests 15, 17, 18, 19, 21).
@Suite struct ManagerCacheKeyTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

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
            guard case .transformFailed(.other, url) = error else { Issue.record("got \(error)"); return }
        }
        #expect(!fixture.manager.isFailedURL(url))
    }
}
