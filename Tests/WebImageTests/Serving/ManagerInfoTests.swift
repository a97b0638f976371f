import Foundation
import Testing
@testable import WebImage
import WebImageWebP

/// Image facts through the manager: computed from a small decode of a shared download, cached under
/// their own key (a warm call decodes nothing, in this process and another), failures typed.
@Suite struct ManagerInfoTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()])

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture(width: 640, height: 480, as: .jpeg)
    }

    @Test func theFactsOfAPhotoComeFromItsHeaderAndASmallDecode() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let info = try await fixture.manager.loadImageInfo(url: server.url("/photo.jpg"), options: .waitStoreCache)
        #expect(info.pixelSize == PixelSize(width: 640, height: 480) && info.format == .jpeg && info.byteCount == picture.count)
        #expect(info.frameCount == 1 && info.duration == nil && !info.hasAlpha && info.orientation == .up && info.cacheType == .none)
        let small = try Self.coders.decode(picture, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 100, height: 100)))
        #expect(small.size == PixelSize(width: 100, height: 75))
        let (blurHash, thumbHash) = (try BlurHash(encoding: small).string, try ThumbHash(encoding: small).bytes)
        let (average, dominant) = (try small.averageColor(), try small.dominantColor())
        #expect(info.blurHash == blurHash, "the placeholders are the small decode's")
        #expect(info.thumbHash == thumbHash)
        #expect(info.averageColor == average && info.dominantColor == dominant)
    }

    @Test func aWarmCallDecodesNothingInThisProcessOrAnother() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/photo.jpg")
        let cold = try await fixture.manager.loadImageInfo(url: url, options: .waitStoreCache)
        let decodesAfterCold = fixture.manager.statistics.decodes
        #expect(decodesAfterCold == 1)
        let fromMemory = try await fixture.manager.loadImageInfo(url: url)
        #expect(fromMemory.cacheType == .memory && fromMemory.blurHash == cold.blurHash && fixture.manager.statistics.decodes == decodesAfterCold)

        let cache = ImageCache(directory: fixture.directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let second = WebImageManager(cache: cache, loader: LoadersManager(loaders: [Downloader(), FileLoader()]), coders: Self.coders)
        var fromDisk = try await second.loadImageInfo(url: url)
        #expect(fromDisk.cacheType == .disk)
        fromDisk.cacheType = cold.cacheType
        #expect(fromDisk == cold, "every fact survives the disk")
        #expect(second.statistics.decodes == 0 && second.statistics.downloads == 0)
        #expect(server.requestCount(for: "/photo.jpg") == 1)
        let cached = try await second.loadImageInfo(url: url, options: .fromCacheOnly)
        #expect(cached.cacheType == .memory, "a disk hit is promoted to memory")
    }

    @Test func concurrentCallsAndAVariantShareOneDownload() async throws {
        server.route("/slow.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture, delayBeforeHeaders: .milliseconds(200)))
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/slow.jpg")
        let manager = fixture.manager
        async let first = manager.loadImageInfo(url: url)
        async let second = manager.loadImageInfo(url: url)
        async let variant = manager.loadVariant(url: url, format: .exactly(.png),
                                                context: WebImageContext(thumbnailPixelSize: PixelSize(width: 100, height: 100)))
        let (a, b, v) = try await (first, second, variant)
        #expect(a.blurHash == b.blurHash && v.pixelSize == PixelSize(width: 100, height: 75))
        #expect(server.requestCount(for: "/slow.jpg") == 1, "one download for the facts and the variant")
    }

    @Test func anAnimationHasItsFramesDurationAndLoopCount() async throws {
        let frames = try (0..<3).map { index in
            ImageFrame(image: try Image(width: 30, height: 20, pixelFormat: .rgba8, pixels: [UInt8](repeating: UInt8(index * 80), count: 30 * 20 * 4)),
                       duration: .milliseconds(100 + index * 10))
        }
        let gif = try Self.coders.encode(try Image(frames: frames, loopCount: 3), as: .gif)
        serve("/spin.gif", gif, headers: [("Content-Type", "image/gif")])
        let fixture = ManagerFixture(coders: Self.coders)
        let info = try await fixture.manager.loadImageInfo(url: server.url("/spin.gif"), options: .decodeFirstFrameOnly)
        #expect(info.format == .gif && info.frameCount == 3 && info.duration == .milliseconds(330) && info.loopCount == 3)
        #expect(info.pixelSize == PixelSize(width: 30, height: 20))
    }

    @Test func theFactsIgnoreTheContextsThumbnailAndTransformerAndKeyTheirComponents() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/photo.jpg")
        var context = WebImageContext(thumbnailPixelSize: PixelSize(width: 16, height: 16))
        context.transformer = LeftHalfTransformer()
        let info = try await fixture.manager.loadImageInfo(url: url, context: context)
        #expect(info.pixelSize == PixelSize(width: 640, height: 480))
        #expect(fixture.manager.infoCacheKey(for: url, context: context) == fixture.manager.infoCacheKey(for: url))
        let wide = try await fixture.manager.loadImageInfo(url: url, blurHashComponents: (9, 2))
        #expect(wide.blurHash.count == 4 + 2 * 9 * 2 && wide.cacheType == .none)
        #expect(fixture.manager.infoCacheKey(for: url, blurHashComponents: (9, 2)) != fixture.manager.infoCacheKey(for: url))
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImageInfo(url: url, blurHashComponents: (0, 3)) }
    }

    @Test func failuresAreTypedAndNothingIsStored() async throws {
        server.route("/missing.jpg", .text("no", status: 404))
        server.route("/text.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: Data("not an image at all".utf8)))
        let fixture = ManagerFixture(coders: Self.coders)
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImageInfo(url: server.url("/missing.jpg")) }
        do {
            _ = try await fixture.manager.loadImageInfo(url: server.url("/text.jpg"), options: .retryFailed)
            Issue.record("bytes that are no image have no facts")
        } catch let error as WebImageError {
            guard case .decodingFailed = error else { Issue.record("\(error)"); return }
        }
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImageInfo(url: nil) }
        await #expect(throws: WebImageError.notInCache(url: server.url("/text.jpg"))) {
            try await fixture.manager.loadImageInfo(url: server.url("/text.jpg"), options: [.fromCacheOnly, .retryFailed])
        }
        let key = try #require(fixture.manager.infoCacheKey(for: server.url("/text.jpg")))
        let stored = try await fixture.cache.cachedData(forKey: key)
        #expect(stored == nil)
    }

    @Test func aCacheWithoutBytesStillGivesEveryFact() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let fixture = ManagerFixture(coders: Self.coders)
        var context = WebImageContext()
        (context.storeCacheType, context.originalStoreCacheType) = (.memory, .memory)
        _ = try await fixture.manager.loadImage(url: server.url("/photo.jpg"), context: context)   // the original in memory only
        let info = try await fixture.manager.loadImageInfo(url: server.url("/photo.jpg"), context: context)
        #expect(info.byteCount == picture.count && info.pixelSize == PixelSize(width: 640, height: 480))
        #expect(server.requestCount(for: "/photo.jpg") == 2, "the bytes came from the loader once more")
    }
}
