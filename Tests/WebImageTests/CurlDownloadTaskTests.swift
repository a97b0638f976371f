import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// The downloader's libcurl transport (``CurlDownloadTask`` over ``CurlEngine``): chosen by
/// ``DownloaderConfig/Transport``, the address policy on the address connected to, redirects that
/// leave the host without credentials, answers URLSession would take as well (an informational head
/// first, a close-delimited body, chunks with trailers) and ones it refuses. The rest of the download
/// suite runs over it too (and once more over URLSession in CI: `WEBIMAGE_DOWNLOAD_TRANSPORT=urlsession`).
@Suite struct CurlDownloadTaskTests {
    let server: TestHTTPServer
    let body = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    init() throws {
        server = try TestHTTPServer()
        server.route("/a.png", TestResponse(headers: [("Content-Type", "image/png")], body: body))
    }

    /// libcurl's open-socket callback puts the address it is about to connect to to the policy (what
    /// closes DNS rebinding): loopback under `publicOnly` is refused before anything is sent, by
    /// address and by name; and the same server is reached under `standard`.
    @Test func theAddressConnectedToIsChecked() async throws {
        defer { server.stop() }
        let refusing = Downloader(config: DownloaderConfig(sourceAddressPolicy: .publicOnly, transport: .curl, proxy: .none))
        let byAddress = server.url("/a.png?refused")
        await #expect(throws: WebImageError.sourceRefused(address: "127.0.0.1", reason: "loopback", url: byAddress)) {
            try await refusing.load(ImageLoadRequest(url: byAddress))
        }
        var components = URLComponents(url: byAddress, resolvingAgainstBaseURL: false)!
        components.host = "localhost"
        let byName = components.url!
        do {
            _ = try await refusing.load(ImageLoadRequest(url: byName))
            Issue.record("localhost was not refused")
        } catch let WebImageError.sourceRefused(_, reason, url) {
            #expect(reason == "loopback" && url == byName)
        }
        #expect(server.requests(for: "/a.png").isEmpty, "nothing was sent to a refused address")
        let allowing = Downloader(config: DownloaderConfig(sourceAddressPolicy: .standard, transport: .curl, proxy: .none))
        #expect(try await allowing.load(ImageLoadRequest(url: server.url("/a.png?allowed"))).data == body)
        #expect(server.requests(for: "/a.png").count == 1)
    }

    /// URLSession (libcurl underneath) always sends `Accept-Encoding`; the libcurl transport never does.
    @Test func sourcesGoThroughLibcurlUnlessURLSessionIsChosen() async throws {
        defer { server.stop() }
        for transport in [DownloaderConfig.Transport.curl, .urlSession] {
            let downloader = Downloader(config: DownloaderConfig(transport: transport, proxy: .none))
            #expect(try await downloader.load(ImageLoadRequest(url: server.url("/a.png?\(transport)"))).data == body)
            await downloader.shutdown()
        }
        let requests = server.requests(for: "/a.png")
        #expect(requests.count == 2)
        #expect(requests.first?.headers["accept-encoding"] == nil, "libcurl asks for no content coding")
        #expect(requests.last?.headers["accept-encoding"] != nil, "URLSession does")
    }

    /// The task holds its operation while it runs; once the download has its verdict neither may keep
    /// the other (nor the outcome's bytes) alive. Found by the serving benchmark: a cold server grew
    /// to 820 MiB, every download's body kept.
    @Test func aFinishedDownloadLetsGoOfItsOperation() async throws {
        defer { server.stop() }
        let scheduler = DownloadScheduler(config: DownloaderConfig(transport: .curl, proxy: .none))
        weak var released: DownloadOperation?
        do {
            let (operation, waiterID) = try #require(scheduler.join(ImageLoadRequest(url: server.url("/a.png"))))
            released = operation
            let response = try await withCheckedThrowingContinuation { operation.addWaiter(waiterID, continuation: $0, progress: nil) }
            #expect(response.data == body)
        }
        let deadline = ContinuousClock.now + busyMachineBound
        while released != nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }   // the worker finishing its job
        #expect(released == nil, "the finished operation is still referenced")
        await scheduler.shutdown()
    }

    @Test func aRedirectToAnotherHostLeavesTheCredentialsBehind() async throws {
        let other = try TestHTTPServer()
        defer { server.stop(); other.stop() }
        other.route("/b.png", TestResponse(headers: [("Content-Type", "image/png")], body: body))
        server.route("/same", .redirect(to: "/a.png"))
        server.route("/away", .redirect(to: other.url("/b.png").absoluteString, status: 307))
        let downloader = Downloader(config: DownloaderConfig(basicAuthentication: ("user", "secret"), transport: .curl, proxy: .none))
        let kept = try await downloader.load(ImageLoadRequest(url: server.url("/same")))
        #expect(kept.data == body && kept.metrics.redirectCount == 1 && kept.url == server.url("/a.png"))
        #expect(server.requests(for: "/a.png").last?.headers["authorization"] != nil, "same host: sent on")
        let away = try await downloader.load(ImageLoadRequest(url: server.url("/away")))
        #expect(away.data == body && away.url == other.url("/b.png"))
        #expect(other.requests(for: "/b.png").first?.headers["authorization"] == nil, "another host: left behind")
        #expect(server.requests(for: "/away").first?.headers["authorization"] != nil)
    }

    @Test func aRedirectLoopStopsAtTheLimit() async throws {
        defer { server.stop() }
        server.route("/loop", .redirect(to: "/loop"))
        let downloader = Downloader(config: DownloaderConfig(maxRedirects: 3, transport: .curl, proxy: .none))
        let url = server.url("/loop")
        await #expect(throws: WebImageError.tooManyRedirects(url: url)) { try await downloader.load(ImageLoadRequest(url: url)) }
        #expect(server.requestCount(for: "/loop") == 4)
    }

    /// Answers written byte for byte by a scripted server: what libcurl reads as URLSession would.
    @Test(arguments: [
        ("an informational head first", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5\r\n\r\nhello", "hello"),
        ("a repeated equal length", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5, 5\r\n\r\nhello", "hello"),
        ("a body that ends with the connection", "HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\nhello", "hello"),
        ("chunks with an extension and a trailer", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nhel\r\n2\r\nlo\r\n0\r\nX-T: 1\r\n\r\n", "hello"),
    ])
    func readsWhatURLSessionReads(_ name: String, _ answer: String, _ expected: String) async throws {
        let scripted = try ScriptedServer(answer: answer)
        defer { server.stop() }
        let downloader = Downloader(config: DownloaderConfig(transport: .curl, proxy: .none))
        let loaded = try await downloader.load(ImageLoadRequest(url: URL(string: "http://127.0.0.1:\(scripted.port)/x.png")!))
        #expect(loaded.data == Data(expected.utf8), "\(name)")
    }

    @Test(arguments: [
        ("conflicting lengths", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5, 6\r\n\r\nhello!"),
        ("not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n"),
        ("a chunk size that is not hex", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n"),
    ])
    func refusesBrokenFraming(_ name: String, _ answer: String) async throws {
        let scripted = try ScriptedServer(answer: answer)
        defer { server.stop() }
        let downloader = Downloader(config: DownloaderConfig(transport: .curl, proxy: .none))
        let url = URL(string: "http://127.0.0.1:\(scripted.port)/x.png")!
        do {
            _ = try await downloader.load(ImageLoadRequest(url: url))
            Issue.record("\(name): accepted")
        } catch WebImageError.transport(let error, let failed) {
            // libcurl says "not HTTP" for the first two, and a receive error for the bad chunk size.
            #expect([.badServerResponse, .networkConnectionLost].contains(error.code) && failed == url, "\(name)")
        }
    }
}

/// A server on 127.0.0.1 that answers every request with the same bytes: then closes the
/// connection, or (`keepsAlive`) waits for the next request on it.
final class ScriptedServer: Sendable {
    let port: Int
    private let listener: Int32
    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
    }

    private let accepted = Counter()

    /// Connections accepted so far.
    var acceptedCount: Int { accepted.value.load(ordering: .relaxed) }

    /// `answer` is sent for each request; with `endless`, bytes follow it as fast as the client takes
    /// them until it goes away (a body with no end in sight).
    init(answer: String, keepsAlive: Bool = false, endless: Bool = false) throws {
        let (listener, port) = try listenOnLoopback(backlog: 8)
        self.listener = listener
        self.port = port
        let bytes = Array(answer.utf8)
        Thread { [accepted] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                accepted.value.add(1, ordering: .relaxed)
                Thread {
                    var request = [UInt8](repeating: 0, count: 8192)
                    // One request per recv (the client sends each whole, and waits for the answer).
                    while recv(client, &request, request.count, 0) > 0 {
                        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        if endless {
                            let filler = [UInt8](repeating: 0x5A, count: 65536)
                            while filler.withUnsafeBytes({ send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 {}
                        }
                        if !keepsAlive { break }
                    }
                    shutdown(client, Int32(SHUT_WR))
                    usleep(50_000)
                    close(client)
                }.start()
            }
        }.start()
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }
}
