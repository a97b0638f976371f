import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageHEIF
import WebImageWebP

/// Every format through the whole pipeline, as a user loads it: served over HTTP, decoded by the
/// registered coder, the original bytes stored on disk, the second load served from disk with the
/// same pixels and frames, one request in all.
@Suite struct FormatLoadingTests {
    struct Case: Sendable, CustomStringConvertible {
        var path: String
        var mime: String
        var format: ImageFormat
        var frames: Int
        var description: String { (path as NSString).lastPathComponent }
    }

    static let cases = [
        Case(path: "gif/valid/wuffs/animated-red-blue.gif", mime: "image/gif", format: .gif, frames: 4),
        Case(path: "png/valid/wuffs/animated-red-blue.apng", mime: "image/apng", format: .png, frames: 4),
        Case(path: "webp/valid/libwebp-test-data/lossless_vec_1_0.webp", mime: "image/webp", format: .webp, frames: 1),
        Case(path: "webp/valid/pillow/iss634.webp", mime: "image/webp", format: .webp, frames: 42),
        Case(path: "avif/valid/av1-avif/Link-U/fox.profile0.8bpc.yuv420.avif", mime: "image/avif", format: .avif, frames: 1),
        Case(path: "avif/valid/pillow/avif/star.avifs", mime: "image/avif", format: .avif, frames: 5),
        Case(path: "heif/valid/pillow/avif/hopper.heif", mime: "image/heif", format: .heic, frames: 1),
    ]

    @Test(arguments: cases)
    func theManagerLoadsTheFormatAndServesItAgainFromDisk(_ format: Case) async throws {
        let server = try TestHTTPServer()
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent(format.path))
        server.route("/image", TestResponse(headers: [("Content-Type", format.mime)], body: data))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coders = CoderRegistry()
        coders.add(WebPCoder())
        coders.add(AVIFCoder())
        coders.add(HEIFCoder())
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil), coders: coders)
        let manager = WebImageManager(cache: cache, loader: Downloader(), coders: coders)
        let url = server.url("/image")
        let first = try await manager.loadImage(url: url, options: .waitStoreCache)
        #expect(first.image.format == format.format)
        #expect(first.image.frames.count == format.frames)
        #expect(try await cache.diskCache?.data(forKey: url.absoluteString) == data, "the original bytes are stored")
        await cache.clear(.memory)
        let second = try await manager.loadImage(url: url)
        #expect(second.cacheType == .disk)
        #expect(second.image.frames.map(\.image.pixels) == first.image.frames.map(\.image.pixels))
        #expect(server.requestCount(for: "/image") == 1)
    }

    @Test func aCorruptImageFailsWithATypedErrorAndIsNotCached() async throws {
        let server = try TestHTTPServer()
        var data = try Data(contentsOf: Corpus.root.appendingPathComponent("gif/valid/wuffs/animated-red-blue.gif"))
        data = data.prefix(data.count / 2)
        server.route("/cut.gif", TestResponse(headers: [("Content-Type", "image/gif")], body: data))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/cut.gif")
        await #expect(throws: WebImageError.self) { try await fixture.manager.loadImage(url: url, options: .waitStoreCache) }
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == nil)
    }
}
