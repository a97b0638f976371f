import Foundation
import Testing
@testable import WebImage

/// The whole flow: download, decode, store, then memory and disk hits; invalid, file and data URLs
/// (SDWebImage manager tests 02, 03).
@Suite struct ManagerFlowTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

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
}
