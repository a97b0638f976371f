import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// The downloader's own HTTP/1.1 client for `http://` sources (``PlainDownloadTask`` over
/// ``HTTP1Client``): chosen by ``DownloaderConfig/Transport``, redirects that leave the host without
/// credentials, answers URLSession would take as well (an informational head first, repeated equal
/// lengths, a close-delimited body) and ones it refuses. The rest of the download suite runs over
/// it too (and once more over URLSession in CI: `WEBIMAGE_DOWNLOAD_TRANSPORT=urlsession`).
@Suite struct PlainTransportTests {
    let server: TestHTTPServer
    let body = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    init() throws {
        server = try TestHTTPServer()
        server.route("/a.png", TestResponse(headers: [("Content-Type", "image/png")], body: body))
    }

    /// The own client applies the source-address policy to the address it connects to, after its own
    /// name lookup (what closes DNS rebinding for `http://` sources): loopback under `publicOnly` is
    /// refused before anything is sent, by address and by name.
    @Test func theOwnClientChecksTheAddressItConnectsTo() async throws {
        defer { server.stop() }
        /// The exchange's error, `nil` when it succeeded.
        func exchange(_ url: URL, _ policy: SourceAddressPolicy) async -> HTTP1Error? {
            await withCheckedContinuation { continuation in
                HTTP1Client.shared.run {
                    let result = HTTP1Client.shared.exchange(
                        HTTP1Client.Request(method: "GET", url: url, headers: []), deadline: .now + .seconds(30), addressPolicy: policy,
                        cancellation: HTTP1Cancellation(), onHead: { _ in true }, onBody: { _ in true })
                    if case .failure(let error) = result { continuation.resume(returning: error) } else { continuation.resume(returning: nil) }
                }
            }
        }
        let byAddress = server.url("/a.png?refused")
        #expect(await exchange(byAddress, .publicOnly) == .addressRefused(address: "127.0.0.1", reason: "loopback"))
        var byName = URLComponents(url: byAddress, resolvingAgainstBaseURL: false)!
        byName.host = "localhost"
        guard case .addressRefused(_, "loopback") = await exchange(byName.url!, .publicOnly) else {
            Issue.record("localhost was not refused as loopback")
            return
        }
        #expect(server.requests(for: "/a.png").isEmpty, "nothing was sent to a refused address")
        #expect(await exchange(server.url("/a.png?allowed"), .standard) == nil)
        #expect(server.requests(for: "/a.png").count == 1)
    }

    /// URLSession (libcurl) always sends `Accept-Encoding`; the own client never does.
    @Test func httpSourcesGoThroughTheOwnClientUnlessURLSessionIsChosen() async throws {
        defer { server.stop() }
        for transport in [DownloaderConfig.Transport.automatic, .urlSession] {
            let downloader = Downloader(config: DownloaderConfig(transport: transport))
            #expect(try await downloader.load(ImageLoadRequest(url: server.url("/a.png?\(transport)"))).data == body)
            await downloader.shutdown()
        }
        let requests = server.requests(for: "/a.png")
        #expect(requests.count == 2)
        #expect(requests.first?.headers["accept-encoding"] == nil, "the own client asks for no content coding")
        #expect(requests.last?.headers["accept-encoding"] != nil, "URLSession's libcurl does")
        #expect(requests.allSatisfy { $0.headers["user-agent"] == DownloaderConfig.defaultUserAgent })
    }

    /// Five downloads one after the other from one server share kept-alive connections (URLSession's
    /// curl keeps connections alive too; the own client must not open one per download). One
    /// connection, unless the machine is so slow (ThreadSanitizer) that a gap between two downloads
    /// passes the 30 s an idle connection is kept.
    @Test func downloadsOneAfterAnotherShareAKeptAliveConnection() async throws {
        let scripted = try ScriptedServer(answer: "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5\r\n\r\nhello",
                                          keepsAlive: true)
        defer { server.stop() }
        let downloader = Downloader(config: DownloaderConfig(transport: .automatic))
        for index in 0..<5 {
            let url = URL(string: "http://127.0.0.1:\(scripted.port)/a.png?\(index)")!
            #expect(try await downloader.load(ImageLoadRequest(url: url)).data == Data("hello".utf8))
        }
        #expect(scripted.acceptedCount < 5, "a connection per download: none was reused")
        #expect(scripted.acceptedCount == 1 || testTimeScale > 1, "\(scripted.acceptedCount) connections")
    }

    /// The nice value of every thread of the process named `prefix…`, from `/proc/self/task`.
    static func niceness(ofThreadsNamed prefix: String) -> [Int] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task -> Int? in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8), comm.hasPrefix(prefix),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")   // fields 3... of proc(5)
            return fields.count > 16 ? Int(fields[16]) : nil   // field 19: nice
        }
    }

    /// A plain download started on a server's cold thread (nice 10) goes to an idle worker of the
    /// HTTP/1.1 client, or through the launch queue when none is idle: a worker that thread started
    /// would be its child and keep nice 10 for good. Every idle worker is kept busy first, so this
    /// download needs a new one.
    @Test func aColdThreadNeverStartsAWorkerOfItsOwnNice() async throws {
        defer { server.stop() }
        let release = DispatchSemaphore(value: 0)
        var held = 0
        while HTTP1Client.shared.runOnIdleWorker({ release.wait() }) { held += 1 }
        defer { for _ in 0..<held { release.signal() } }
        let downloader = Downloader(config: DownloaderConfig(transport: .automatic))
        let url = server.url("/a.png?cold-thread")
        let data = try await Task(executorPreference: ThreadPoolExecutor.coldWork) {
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == ThreadPoolExecutor.loweredNiceness, "runs on a cold thread")
            return try await downloader.load(ImageLoadRequest(url: url)).data
        }.value
        #expect(data == body)
        let workers = Self.niceness(ofThreadsNamed: "webimage.http-")
        #expect(!workers.isEmpty)
        #expect(workers.allSatisfy { $0 == 0 }, "worker nice values: \(workers)")
    }

    /// A server that sends faster than the client reads never outlasts the exchange's deadline: every
    /// read finds bytes waiting (no wait in `poll`, where the time is checked too), and the reader
    /// still stops at the deadline.
    @Test func aBodyThatNeverEndsStopsAtTheDeadline() async throws {
        defer { server.stop() }
        let endless = try ScriptedServer(answer: "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 1000000000000\r\n\r\n", endless: true)
        let url = URL(string: "http://127.0.0.1:\(endless.port)/endless.png")!
        // Past 10 s the exchange is cut from outside (then it ends `.cancelled`, and the test fails, not hangs).
        let cancellation = HTTP1Cancellation()
        let watchdog = Task {
            try await Task.sleep(for: .seconds(10 * testTimeScale))
            cancellation.cancel()
        }
        defer { watchdog.cancel() }
        // The exchange's own time, measured on the worker: what comes after it (this task resuming on
        // a busy cooperative pool, 26 s once under ThreadSanitizer with the whole suite) is not the reader's.
        let (result, received, took) = await withCheckedContinuation { (continuation: CheckedContinuation<(Result<Void, HTTP1Error>, Int, Duration), Never>) in
            HTTP1Client.shared.run {
                var received = 0
                let started = ContinuousClock.now
                let result = HTTP1Client.shared.exchange(
                    HTTP1Client.Request(method: "GET", url: url, headers: []), deadline: .now + .milliseconds(300),
                    cancellation: cancellation, onHead: { _ in true }, onBody: { piece in
                        received += piece.count
                        usleep(2000)   // slower than the server: the socket always has bytes waiting
                        return true
                    })
                continuation.resume(returning: (result, received, ContinuousClock.now - started))
            }
        }
        guard case .failure(.timedOut) = result else {
            Issue.record("ended with \(result) after \(received) bytes, not at the deadline")
            return
        }
        #expect(received > 0, "the body was being read")
        #expect(took < .seconds(10 * testTimeScale), "the exchange went on long past its 300 ms deadline")
    }

    /// The task holds its operation while it runs; once the download has its verdict neither may keep
    /// the other (nor the outcome's bytes) alive. Found by the serving benchmark: a cold server grew
    /// to 820 MiB, every download's body kept.
    @Test func aFinishedDownloadLetsGoOfItsOperation() async throws {
        defer { server.stop() }
        let scheduler = DownloadScheduler(config: DownloaderConfig(transport: .automatic))
        weak var released: DownloadOperation?
        do {
            let (operation, waiterID) = try #require(scheduler.join(ImageLoadRequest(url: server.url("/a.png"))))
            released = operation
            let response = try await withCheckedThrowingContinuation { operation.addWaiter(waiterID, continuation: $0, progress: nil) }
            #expect(response.data == body)
        }
        let deadline = ContinuousClock.now + .seconds(10)
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
        let downloader = Downloader(config: DownloaderConfig(basicAuthentication: ("user", "secret"), transport: .automatic))
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
        let downloader = Downloader(config: DownloaderConfig(maxRedirects: 3, transport: .automatic))
        let url = server.url("/loop")
        await #expect(throws: WebImageError.tooManyRedirects(url: url)) { try await downloader.load(ImageLoadRequest(url: url)) }
        #expect(server.requestCount(for: "/loop") == 4)
    }

    /// Answers written byte for byte by a scripted server: what the own client reads as URLSession would.
    @Test(arguments: [
        ("an informational head first", "HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5\r\n\r\nhello", "hello"),
        ("a repeated equal length", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 5, 5\r\n\r\nhello", "hello"),
        ("a body that ends with the connection", "HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\nhello", "hello"),
        ("chunks with an extension and a trailer", "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nhel\r\n2\r\nlo\r\n0\r\nX-T: 1\r\n\r\n", "hello"),
    ])
    func readsWhatURLSessionReads(_ name: String, _ answer: String, _ expected: String) async throws {
        let scripted = try ScriptedServer(answer: answer)
        defer { server.stop() }
        let downloader = Downloader(config: DownloaderConfig(transport: .automatic))
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
        let downloader = Downloader(config: DownloaderConfig(transport: .automatic))
        let url = URL(string: "http://127.0.0.1:\(scripted.port)/x.png")!
        await #expect(throws: WebImageError.transport(URLError(.badServerResponse), url: url), "\(name)") {
            try await downloader.load(ImageLoadRequest(url: url))
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
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listener, socketAddress, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, socketAddress, &length) == 0
            }
        }
        guard bound else { throw TestHTTPServerError(call: "bind", code: errno) }
        port = Int(UInt16(bigEndian: address.sin_port))
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
