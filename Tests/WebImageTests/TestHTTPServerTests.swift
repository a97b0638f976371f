import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The test server, checked with plain `URLSession` (no WebImage code involved).
@Suite struct TestHTTPServerTests {
    private func get(_ url: URL, headers: [String: String] = [:]) async throws -> (Data, HTTPURLResponse) {
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return try await fetch(request)
    }

    /// Fetches with `session`, or by default a fresh session of its own: URLSession.shared limits
    /// connections per host across every test running in parallel, so another test's 30 s reply
    /// could hold this request in its queue.
    private func fetch(_ request: URLRequest, session: URLSession? = nil) async throws -> (Data, HTTPURLResponse) {
        let active = session ?? Self.makeSession()
        defer { if session == nil { active.finishTasksAndInvalidate() } }
        let (data, response) = try await active.data(for: request)
        return (data, try #require(response as? HTTPURLResponse))
    }

    private static func makeSession() -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        return URLSession(configuration: configuration)
    }

    private static func bytes(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    }

    @Test func servesAFixedRouteWithItsHeadersAndBody() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(5_000)
        server.route("/image.png", TestResponse(headers: [("Content-Type", "image/png"), ("X-Scripted", "yes")], body: body))
        let (data, response) = try await get(server.url("/image.png"))
        #expect(response.statusCode == 200)
        #expect(response.value(forHTTPHeaderField: "Content-Type") == "image/png")
        #expect(response.value(forHTTPHeaderField: "X-Scripted") == "yes")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "5000")
        #expect(data == body)
        #expect(server.url("/x").absoluteString == "http://127.0.0.1:\(server.port)/x")
    }

    @Test func anUnknownPathIsA404WithAShortText() async throws {
        let server = try TestHTTPServer()
        let (data, response) = try await get(server.url("/nowhere"))
        #expect(response.statusCode == 404)
        #expect(String(decoding: data, as: UTF8.self).hasPrefix("Not Found"))
        #expect(server.requestCount(for: "/nowhere") == 1)
    }

    @Test func recordsMethodPathHeadersAndBodyAndCountsRequests() async throws {
        let server = try TestHTTPServer()
        server.route("/upload", .text("ok"))
        var request = URLRequest(url: server.url("/upload?size=large"))
        request.httpMethod = "POST"
        request.setValue("abc", forHTTPHeaderField: "X-Token")
        request.httpBody = Data("payload".utf8)
        _ = try await fetch(request)
        _ = try await get(server.url("/upload"))

        #expect(server.totalRequestCount == 2)
        #expect(server.requestCount(for: "/upload") == 2)
        #expect(server.requestCount(for: "/upload?size=large") == 1)
        let first = try #require(server.requests(for: "/upload").first)
        #expect(first.method == "POST")
        #expect(first.path == "/upload?size=large")
        #expect(first.headers["x-token"] == "abc")
        #expect(first.headers["host"] == "127.0.0.1:\(server.port)")
        #expect(first.body == Data("payload".utf8))
        #expect(server.requests(for: "/upload").last?.method == "GET")
    }

    @Test func aRouteWithAQueryMatchesOnlyThatQuery() async throws {
        let server = try TestHTTPServer()
        server.route("/thumb", .text("any"))
        server.route("/thumb?w=100", .text("small"))
        let (small, _) = try await get(server.url("/thumb?w=100"))
        let (other, _) = try await get(server.url("/thumb?w=200"))
        #expect(String(decoding: small, as: UTF8.self) == "small")
        #expect(String(decoding: other, as: UTF8.self) == "any")
    }

    @Test func aDynamicHandlerSeesRequestHeadersAndCanAnswer304() async throws {
        let server = try TestHTTPServer()
        let etag = "\"v1\""
        server.route("/cached") { request in
            request.headers["if-none-match"] == etag
                ? TestResponse(status: 304, headers: [("ETag", etag)])
                : TestResponse(headers: [("ETag", etag)], body: Data("fresh".utf8))
        }
        let (first, firstResponse) = try await get(server.url("/cached"))
        #expect(firstResponse.statusCode == 200)
        #expect(first == Data("fresh".utf8))
        #expect(firstResponse.value(forHTTPHeaderField: "ETag") == etag)

        // corelibs URLSession hands the 304 itself to the caller, with an empty body.
        let (second, secondResponse) = try await get(server.url("/cached"), headers: ["If-None-Match": etag])
        #expect(secondResponse.statusCode == 304)
        #expect(second.isEmpty)
        #expect(server.requests(for: "/cached").map { $0.headers["if-none-match"] } == [nil, etag])
    }

    @Test func aSequenceRouteRepliesInTurnThenRepeatsTheLast() async throws {
        let server = try TestHTTPServer()
        server.route("/flaky", sequence: [.text("down", status: 503), .text("up")])
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await get(server.url("/flaky")).1.statusCode) }
        #expect(statuses == [503, 200, 200])
    }

    @Test func aRedirectIsFollowedByURLSession() async throws {
        let server = try TestHTTPServer()
        server.route("/old", .redirect(to: "/new"))
        server.route("/new", .text("moved here"))
        let (data, response) = try await get(server.url("/old"))
        #expect(response.statusCode == 200)
        #expect(response.url?.path == "/new")
        #expect(String(decoding: data, as: UTF8.self) == "moved here")
        #expect(server.requestCount(for: "/old") == 1)
        #expect(server.requestCount(for: "/new") == 1)
    }

    @Test func delayBeforeHeadersHoldsTheWholeResponseBack() async throws {
        let server = try TestHTTPServer()
        server.route("/slow", TestResponse(body: Data("late".utf8), delayBeforeHeaders: .milliseconds(400)))
        let start = ContinuousClock.now
        let (data, _) = try await get(server.url("/slow"))
        #expect(ContinuousClock.now - start >= .milliseconds(400))
        #expect(data == Data("late".utf8))
    }

    @Test func dripSendsTheBodyInPiecesAsSlowlyAsScripted() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(1_000)
        server.route("/drip", TestResponse(body: body, drip: (chunkSize: 200, interval: .milliseconds(100))))
        let start = ContinuousClock.now
        let (data, _) = try await get(server.url("/drip"))
        #expect(ContinuousClock.now - start >= .milliseconds(500))  // 5 pieces, 100 ms before each
        #expect(data == body)
    }

    @Test func closeAfterBodyBytesGivesTheClientLessThanContentLength() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(50_000)
        server.route("/cut", TestResponse(body: body, closeAfterBodyBytes: 1_000))
        do {
            let (data, _) = try await get(server.url("/cut"))
            #expect(data.count < body.count)  // short data, if URLSession does not report an error
        } catch {
            // What corelibs does: curl's "transfer closed with outstanding read data remaining".
            #expect(error is URLError)
        }
        #expect(server.closedByClientCount(for: "/cut") == 0)  // the server chose to close
    }

    @Test func aRouteThatServesRangesAnswersARangeWith206AndTheRest() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(5_000)
        server.route("/ranged", TestResponse(headers: [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")], body: body, servesRanges: true))
        let (data, response) = try await get(server.url("/ranged"), headers: ["Range": "bytes=1200-"])
        #expect(response.statusCode == 206)
        #expect(response.value(forHTTPHeaderField: "Content-Range") == "bytes 1200-4999/5000")
        #expect(response.value(forHTTPHeaderField: "Content-Length") == "3800")
        #expect(data == body.subdata(in: 1200..<5000))
        let (middle, bounded) = try await get(server.url("/ranged"), headers: ["Range": "bytes=10-19"])
        #expect(bounded.statusCode == 206 && middle == body.subdata(in: 10..<20))
        let (whole, plain) = try await get(server.url("/ranged"))
        #expect(plain.statusCode == 200 && whole == body)
    }

    @Test func ifRangeMatchingTheETagOrLastModifiedGivesTheRangeAndAnythingElseTheWholeBody() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(3_000)
        let date = "Tue, 01 Apr 2025 10:00:00 GMT"
        server.route("/tagged", TestResponse(headers: [("ETag", "\"v2\"")], body: body, servesRanges: true))
        server.route("/dated", TestResponse(headers: [("Last-Modified", date)], body: body, servesRanges: true))
        server.route("/weak", TestResponse(headers: [("ETag", "W/\"v2\"")], body: body, servesRanges: true))
        let (_, matching) = try await get(server.url("/tagged"), headers: ["Range": "bytes=100-", "If-Range": "\"v2\""])
        #expect(matching.statusCode == 206)
        let (changed, stale) = try await get(server.url("/tagged"), headers: ["Range": "bytes=100-", "If-Range": "\"v1\""])
        #expect(stale.statusCode == 200 && changed == body)
        let (_, byDate) = try await get(server.url("/dated"), headers: ["Range": "bytes=100-", "If-Range": date])
        #expect(byDate.statusCode == 206)
        let (_, weak) = try await get(server.url("/weak"), headers: ["Range": "bytes=100-", "If-Range": "W/\"v2\""])
        #expect(weak.statusCode == 200)
    }

    @Test func aRangePastTheEndIs416AndARouteWithoutRangesIgnoresRange() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(1_000)
        server.route("/short", TestResponse(body: body, servesRanges: true))
        server.route("/plain", TestResponse(headers: [("Accept-Ranges", "bytes")], body: body))
        let (_, past) = try await get(server.url("/short"), headers: ["Range": "bytes=1000-"])
        #expect(past.statusCode == 416)
        #expect(past.value(forHTTPHeaderField: "Content-Range") == "bytes */1000")
        let (data, ignored) = try await get(server.url("/plain"), headers: ["Range": "bytes=10-"])
        #expect(ignored.statusCode == 200 && data == body)
        #expect(server.requests(for: "/plain").first?.headers["range"] == "bytes=10-")
    }

    @Test func aSequenceCanCutTheFirstReplyAndServeTheRestAsARange() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(8_000)
        let reply = TestResponse(headers: [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")], body: body, servesRanges: true)
        var cut = reply
        cut.closeAfterBodyBytes = 3_000
        server.route("/resumable", sequence: [cut, reply])
        do {
            let (data, _) = try await get(server.url("/resumable"))
            #expect(data.count < body.count)
        } catch {
            #expect(error is URLError)
        }
        let (rest, response) = try await get(server.url("/resumable"), headers: ["Range": "bytes=3000-", "If-Range": "\"v1\""])
        #expect(response.statusCode == 206 && rest == body.subdata(in: 3000..<8000))
    }

    @Test func anExactContentLengthCanLieAndAnOmittedOneIsCloseDelimited() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(3_000)
        server.route("/lie", TestResponse(body: body, contentLength: .exactly(6_000)))
        server.route("/eof", TestResponse(body: body, contentLength: .omitted))
        do {
            let (data, response) = try await get(server.url("/lie"))
            #expect(response.expectedContentLength == 6_000)
            #expect(data.count < 6_000)
        } catch {
            #expect(error is URLError)
        }
        let (data, response) = try await get(server.url("/eof"))
        #expect(response.value(forHTTPHeaderField: "Content-Length") == nil)
        #expect(data == body)
    }

    @Test func twoHundredConcurrentRequestsAreAllServed() async throws {
        let server = try TestHTTPServer()
        server.route("/item") { request in .text("item \(request.path)") }
        let urls = (0..<200).map { server.url("/item?n=\($0)") }
        let results = try await withThrowingTaskGroup(of: (URL, Int, String).self) { group in
            for url in urls {
                group.addTask {
                    let (data, response) = try await get(url)
                    return (url, response.statusCode, String(decoding: data, as: UTF8.self))
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 200)
        for (url, status, text) in results {
            #expect(status == 200)
            #expect(text == "item \(url.path)?\(url.query ?? "")")
        }
        #expect(server.requestCount(for: "/item") == 200)
    }

    @Test func holdsTwoHundredConnectionsOpenAtOnce() async throws {
        // A session allowing more than URLSession.shared's 6 connections per host really opens 200.
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 256
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let server = try TestHTTPServer()
        // Each reply waits (on its server thread) until all 200 requests have arrived, so they overlap:
        // the event itself, bounded only against a broken client (a loaded machine makes this slower,
        // not red), and the requests' own time-out is longer still.
        let arrived = Mutex(0)
        let bound = Duration.seconds(120) * testTimeScale
        server.route("/held") { _ in
            arrived.withLock { $0 += 1 }
            let deadline = ContinuousClock.now + bound
            while arrived.withLock({ $0 }) < 200, ContinuousClock.now < deadline { usleep(2_000) }
            return .text("held")
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<200 {
                group.addTask {
                    var request = URLRequest(url: server.url("/held?n=\(n)"))
                    request.timeoutInterval = Double(bound.components.seconds) * 2
                    return try await fetch(request, session: session).1.statusCode
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 200))
        #expect(server.peakConnectionCount >= 200)
        #expect(await server.waitUntil { server.activeConnectionCount() == 0 })
    }

    @Test func aClientCancellingMidDripIsCountedAsClosedByClient() async throws {
        let server = try TestHTTPServer()
        // Twice busyMachineBound of drip (a fixed 100 s ran out once under a loaded ThreadSanitizer run): the
        // cancel lands mid-body however slowly a loaded machine runs this test.
        server.route("/long", TestResponse(body: Self.bytes(1000), drip: (chunkSize: 10, interval: busyMachineBound / 50)))
        let task = Task { try await get(server.url("/long")) }
        #expect(await server.waitUntil { server.requestCount(for: "/long") == 1 })
        try await Task.sleep(for: .milliseconds(300))  // a piece or so is on the wire
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
        #expect(await server.waitUntil { server.closedByClientCount(for: "/long") == 1 })
        #expect(await server.waitUntil { server.activeConnectionCount() == 0 })
    }

    @Test func stopClosesTheListenerAndOpenConnections() async throws {
        let server = try TestHTTPServer()
        server.route("/forever", TestResponse(body: Data("x".utf8), delayBeforeHeaders: busyMachineBound))
        let task = Task { try await get(server.url("/forever")) }
        #expect(await server.waitUntil { server.activeConnectionCount() == 1 && server.totalRequestCount == 1 })
        let start = ContinuousClock.now
        server.stop()
        // The server's own stop, not the client's noticing (which a loaded machine can delay for many seconds).
        #expect(ContinuousClock.now - start < .seconds(10) * testTimeScale)  // not the scripted busyMachineBound
        #expect(server.activeConnectionCount() == 0)
        await #expect(throws: (any Error).self) { try await task.value }
        #expect(server.closedByClientCount(for: "/forever") == 0)
        await #expect(throws: (any Error).self) { try await get(server.url("/forever")) }
    }

    // MARK: Misbehaviour

    @Test func bytesSentCountsTheHeadAndTheBody() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(2_000)
        server.route("/counted", TestResponse(headers: [("Content-Type", "image/png")], body: body))
        _ = try await get(server.url("/counted"))
        let head = TestHTTPServerConnection.head(status: 200, headers: [("Content-Type", "image/png")], contentLength: body.count)
        #expect(server.bytesSent(for: "/counted") == head.count + body.count)
        #expect(server.bytesSent(for: "/elsewhere") == 0)
    }

    @Test func resetAfterBodyBytesCutsTheConnectionWithAnError() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(50_000)
        server.route("/reset", TestResponse(body: body, contentLength: .omitted, misbehavior: .resetAfterBodyBytes(10_000)))
        // Without a Content-Length an orderly close would be a complete body; a reset is an error.
        await #expect(throws: URLError.self) { try await get(server.url("/reset")) }
        #expect(server.closedByClientCount(for: "/reset") == 0)
        let head = TestHTTPServerConnection.head(status: 200, headers: [], contentLength: nil)
        #expect(server.bytesSent(for: "/reset") == head.count + 10_000)
    }

    @Test func stallAfterBodyBytesSendsThatMuchThenWaitsForTheClientToLeave() async throws {
        let server = try TestHTTPServer()
        let body = Self.bytes(20_000)
        server.route("/hang", TestResponse(body: body, misbehavior: .stallAfterBodyBytes(4_000)))
        let (task, ended) = startGet(server.url("/hang"))
        let head = TestHTTPServerConnection.head(status: 200, headers: [], contentLength: body.count)
        #expect(await server.waitUntil { server.bytesSent(for: "/hang") == head.count + 4_000 })
        #expect(!ended.isSet)
        task.cancel()
        #expect(await server.waitUntil { server.closedByClientCount(for: "/hang") == 1 })
        #expect(server.bytesSent(for: "/hang") == head.count + 4_000)
    }

    /// Set once, read from anywhere.
    private final class Flag: Sendable {
        private let state = Mutex(false)
        func set() { state.withLock { $0 = true } }
        var isSet: Bool { state.withLock { $0 } }
    }

    /// Starts a GET of `url` in a task and returns it with a flag set once it has ended.
    private func startGet(_ url: URL) -> (task: Task<Void, Never>, ended: Flag) {
        let ended = Flag()
        let task = Task {
            _ = try? await get(url)
            ended.set()
        }
        return (task, ended)
    }

    @Test func endlessHeaderLinesKeepComingUntilTheClientLeaves() async throws {
        let server = try TestHTTPServer()
        server.route("/lines", TestResponse(misbehavior: .endlessHeaderLines(interval: .milliseconds(1))))
        let (task, ended) = startGet(server.url("/lines"))
        #expect(await server.waitUntil { server.bytesSent(for: "/lines") > 2_000 })
        #expect(!ended.isSet, "the head never ends, so the request cannot have ended")
        task.cancel()
        await task.value
        #expect(await server.waitUntil { server.closedByClientCount(for: "/lines") == 1 })
        #expect(await server.waitUntil { server.activeConnectionCount() == 0 })
    }

    @Test func unterminatedHeadersStallUntilTheClientLeaves() async throws {
        let server = try TestHTTPServer()
        let headers = [("Content-Type", "image/png")]
        server.route("/stall", TestResponse(headers: headers, misbehavior: .unterminatedHeaders))
        let (task, ended) = startGet(server.url("/stall"))
        // The head without its blank line: the status line and the headers, nothing more.
        let expected = TestHTTPServerConnection.head(status: 200, headers: headers, contentLength: nil).count
            - "Connection: close\r\n\r\n".utf8.count
        #expect(await server.waitUntil { server.bytesSent(for: "/stall") == expected })
        try await Task.sleep(for: .milliseconds(200))
        #expect(!ended.isSet, "the head never ends, so the request cannot have ended")
        #expect(server.bytesSent(for: "/stall") == expected)
        task.cancel()
        await task.value
        #expect(await server.waitUntil { server.closedByClientCount(for: "/stall") == 1 })
        #expect(await server.waitUntil { server.activeConnectionCount() == 0 })
    }

    @Test func anEndlessChunkedBodyKeepsComingUntilTheClientLeaves() async throws {
        let server = try TestHTTPServer()
        let first = Data("first chunk".utf8)
        server.route("/chunks", TestResponse(body: first, misbehavior: .endlessChunkedBody(chunkSize: 16 << 10, interval: .milliseconds(1))))
        let (task, ended) = startGet(server.url("/chunks"))
        #expect(await server.waitUntil { server.bytesSent(for: "/chunks") > 256 << 10 })
        #expect(!ended.isSet, "the body never ends, so the request cannot have ended")
        task.cancel()
        await task.value
        #expect(await server.waitUntil { server.closedByClientCount(for: "/chunks") == 1 })
        #expect(await server.waitUntil { server.activeConnectionCount() == 0 }, "the server stops once the client leaves")
    }

    @Test func anEndlessChunkedBodyIsValidChunkedEncoding() async throws {
        // A raw socket reads the first chunks as sent, framing included.
        let server = try TestHTTPServer()
        server.route("/framing", TestResponse(body: Data("hello".utf8), misbehavior: .endlessChunkedBody(chunkSize: 4, interval: .milliseconds(1))))
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(server.port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        try #require(connected == 0)
        let request = Array("GET /framing HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        try #require(send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count)
        let expected = "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n4\r\n\u{07}&E\u{64}\r\n4\r\n"
        var received = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(expected) && received.count < 4096 {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains(expected), "\(text.debugDescription)")
        #expect(!text.contains("Content-Length"))
    }
}
