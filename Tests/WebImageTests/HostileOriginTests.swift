import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import WebImage

/// Origins that flood, trickle, compress or redirect against the downloader over libcurl: each ends
/// in a typed ``WebImageError`` within the limits, reading no more than they allow; plus an `https`
/// origin with a private certificate authority, and a proxy.
@Suite struct HostileOriginTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let picture = try! encodedPicture(width: 40, height: 30, seed: 5)

    /// 1 MiB, 5 s: every case here ends well within them.
    static func downloader(maxBytes: Int = 1 << 20, timeout: Duration = .seconds(5), idle: Duration = .seconds(30),
                           proxy: ProxySettings = .none, authorities: URL? = nil, policy: SourceAddressPolicy = .standard) -> Downloader {
        Downloader(config: DownloaderConfig(downloadTimeout: timeout * testTimeScale, idleTimeout: idle * testTimeScale, maxResponseBytes: maxBytes,
                                            sourceAddressPolicy: policy, transport: .curl, proxy: proxy,
                                            certificateAuthorityFile: authorities?.path))
    }

    /// The load's error, recorded as an issue when it succeeded.
    func failure(of url: URL, with downloader: Downloader, progress: ImageLoadProgressHandler? = nil) async -> WebImageError? {
        do {
            let response = try await downloader.load(ImageLoadRequest(url: url), progress: progress)
            Issue.record("expected a failure, got \(response.data.count) bytes")
            return nil
        } catch let error as WebImageError {
            return error
        } catch {
            Issue.record("not a WebImageError: \(error)")
            return nil
        }
    }

    static let headsRefusal = "the answer's heads passed \(CurlTransfer.maxHeadBytes) bytes"

    @Test func aFloodOfInformationalAnswersIsCutAtTheHeadLimit() async throws {
        let origin = try ScriptedOrigin()
        let flood = Data(String(repeating: "HTTP/1.1 102 Processing\r\n\r\n", count: 150_000).utf8)   // 4 MB
        origin.route("/x.png", .init(answer: flood + ScriptedOrigin.answer(body: Self.picture)))
        let url = origin.url("/x.png")
        #expect(await failure(of: url, with: Self.downloader()) == .rejected(url: url, reason: Self.headsRefusal))
    }

    @Test func aFloodOfHeaderLinesIsCut() async throws {
        let origin = try ScriptedOrigin()
        let lines = String(repeating: "X-Filler: " + String(repeating: "a", count: 100) + "\r\n", count: 40_000)   // 4.4 MB
        origin.route("/x.png", .init(answer: Data("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\(lines)Content-Length: 5\r\n\r\nhello".utf8)))
        let url = origin.url("/x.png")
        let error = await failure(of: url, with: Self.downloader())
        // Ours at 512 KiB, or libcurl's own limit on a head, whichever comes first.
        #expect(error == .rejected(url: url, reason: Self.headsRefusal) || error == .transport(URLError(.badServerResponse), url: url),
                "\(String(describing: error))")
    }

    @Test func aFloodOfTrailersIsCut() async throws {
        let origin = try ScriptedOrigin()
        let trailers = String(repeating: "X-Trailer: " + String(repeating: "b", count: 100) + "\r\n", count: 40_000)
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\(trailers)\r\n"
        origin.route("/x.png", .init(answer: Data(answer.utf8)))
        let url = origin.url("/x.png")
        let error = await failure(of: url, with: Self.downloader())
        #expect(error == .rejected(url: url, reason: Self.headsRefusal) || error == .transport(URLError(.badServerResponse), url: url),
                "\(String(describing: error))")
    }

    /// 16 KB of gzip that inflates to 16 MiB, sent though no coding was asked for: decoded by libcurl
    /// and cut at the 1 MiB limit, counted on the decoded bytes: the body never holds more.
    @Test func aGzipBombIsCutAtTheLimitOnTheDecodedBytes() async throws {
        let origin = try ScriptedOrigin()
        let bomb = try Data(contentsOf: Self.fixtures.appendingPathComponent("bomb-16MiB-zeros.gz"))
        origin.route("/bomb.png", .init(answer: ScriptedOrigin.answer(body: bomb, fields: ["Content-Type: image/png", "Content-Encoding: gzip"])))
        let url = origin.url("/bomb.png")
        let most = Mutex(0)
        let error = await failure(of: url, with: Self.downloader()) { progress in
            most.withLock { $0 = max($0, progress.receivedBytes) }
        }
        #expect(error == .responseTooLarge(limit: 1 << 20, url: url))
        #expect(most.withLock { $0 } <= 1 << 20, "the body went past the limit")
    }

    @Test func aGzippedAnswerIsDecoded() async throws {
        let origin = try ScriptedOrigin()
        let bomb = try Data(contentsOf: Self.fixtures.appendingPathComponent("bomb-16MiB-zeros.gz"))
        origin.route("/zeros", .init(answer: ScriptedOrigin.answer(body: bomb, fields: ["Content-Type: application/octet-stream", "Content-Encoding: gzip"])))
        let loaded = try await Self.downloader(maxBytes: 32 << 20).load(ImageLoadRequest(url: origin.url("/zeros")))
        #expect(loaded.data == Data(count: 16 << 20))
    }

    /// A body that trickles a byte at a time ends at the download's deadline (the body never ends: without
    /// the deadline the load would not return; the bound is loose because a busy machine delays the wake-up).
    @Test func aSlowBodyEndsAtTheDeadline() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.route("/slow.png", TestResponse(headers: [("Content-Type", "image/png")], body: Self.picture,
                                               misbehavior: .endlessChunkedBody(chunkSize: 1, interval: .milliseconds(100))))
        let url = server.url("/slow.png")
        let started = ContinuousClock.now
        #expect(await failure(of: url, with: Self.downloader(timeout: .seconds(1))) == .timedOut(url: url))
        #expect(ContinuousClock.now - started < .seconds(60) * testTimeScale)
    }

    @Test func anHTTPSOriginWithAPrivateAuthorityIsTrustedOnlyWhenConfigured() async throws {
        let origin = try await TLSOrigin(body: Self.picture)
        let url = origin.url("/x.png")
        let trusted = try await Self.downloader(authorities: origin.authorityFile).load(ImageLoadRequest(url: url))
        #expect(trusted.data == Self.picture && trusted.statusCode == 200)
        let error = await failure(of: url, with: Self.downloader())
        #expect(error == .transport(URLError(.serverCertificateUntrusted), url: url), "\(String(describing: error))")
        await origin.stop()
    }

    /// The refused hop is checked by libcurl's open-socket callback like the first request.
    @Test func aRedirectFromHTTPSToALinkLocalAddressIsRefused() async throws {
        let target = "http://169.254.169.254/latest/meta-data/"
        let origin = try await TLSOrigin(body: Self.picture, redirectLocation: target)
        let error = await failure(of: origin.url("/redirect"), with: Self.downloader(authorities: origin.authorityFile))
        #expect(error == .sourceRefused(address: "169.254.169.254", reason: "link-local", url: URL(string: target)!))
        await origin.stop()
    }

    /// The proxy gets the request in absolute form and answers it; the origin's name is never resolved here.
    @Test func aProxyCarriesTheRequest() async throws {
        let proxy = try ScriptedOrigin()
        let url = URL(string: "http://images.example.invalid/x.png")!
        proxy.route(url.absoluteString, .init(answer: ScriptedOrigin.answer(body: Self.picture)))
        let settings = ProxySettings(httpProxy: "http://127.0.0.1:\(proxy.port)")
        let loaded = try await Self.downloader(proxy: settings).load(ImageLoadRequest(url: url))
        #expect(loaded.data == Self.picture)
        #expect(proxy.requestCount(for: url.absoluteString) == 1)
        // NO_PROXY: the same request goes direct, and the name does not resolve.
        let direct = ProxySettings(httpProxy: settings.httpProxy, noProxy: "example.invalid")
        let error = await failure(of: url, with: Self.downloader(proxy: direct))
        #expect(error == .transport(URLError(.cannotFindHost), url: url), "\(String(describing: error))")
    }

    @Test func proxySettingsFollowTheEnvironmentAndNoProxy() {
        let settings = ProxySettings.fromEnvironment(["HTTP_PROXY": "http://upper:1", "http_proxy": "http://lower:2",
                                                      "HTTPS_PROXY": "http://tls:3", "NO_PROXY": ".internal, 10.0.0.1,[::1]"])
        #expect(settings == ProxySettings(httpProxy: "http://lower:2", httpsProxy: "http://tls:3", noProxy: ".internal, 10.0.0.1,[::1]"))
        #expect(settings.proxy(for: URL(string: "http://a.example/x")!) == "http://lower:2")
        #expect(settings.proxy(for: URL(string: "https://a.example/x")!) == "http://tls:3")
        #expect(settings.proxy(for: URL(string: "http://cdn.internal/x")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://internal/x")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://notinternal/x")!) == "http://lower:2")
        #expect(settings.proxy(for: URL(string: "http://10.0.0.1/x")!) == nil)
        #expect(settings.proxy(for: URL(string: "http://[::1]:8080/x")!) == nil)
        #expect(ProxySettings.fromEnvironment(["NO_PROXY": "*", "http_proxy": "http://p:1"]).proxy(for: URL(string: "http://a/x")!) == nil)
        #expect(ProxySettings.fromEnvironment(["http_proxy": ""]) == .none)
    }
}
