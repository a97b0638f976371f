import Foundation
import Testing
@testable import WebImage

/// Failed URLs, the blocklist and retries (SDWebImage manager tests 07, 08).
@Suite struct ManagerFailedURLTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

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
}
