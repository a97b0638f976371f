import Foundation
import Testing
@testable import WebImage

/// Refreshing a cached image against the server (SDWebImage manager test 13).
@Suite struct ManagerRefreshTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

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
}
