import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
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
        // Each reply waits (on its server thread) until all 200 requests have arrived, so they overlap.
        let arrived = Mutex(0)
        server.route("/held") { _ in
            arrived.withLock { $0 += 1 }
            let deadline = ContinuousClock.now + .seconds(5)
            while arrived.withLock({ $0 }) < 200, ContinuousClock.now < deadline { usleep(2_000) }
            return .text("held")
        }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<200 {
                group.addTask {
                    try await fetch(URLRequest(url: server.url("/held?n=\(n)")), session: session).1.statusCode
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
        server.route("/long", TestResponse(body: Self.bytes(100), drip: (chunkSize: 10, interval: .milliseconds(200))))
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
        server.route("/forever", TestResponse(body: Data("x".utf8), delayBeforeHeaders: .seconds(30)))
        let task = Task { try await get(server.url("/forever")) }
        #expect(await server.waitUntil { server.activeConnectionCount() == 1 && server.totalRequestCount == 1 })
        let start = ContinuousClock.now
        server.stop()
        #expect(server.activeConnectionCount() == 0)
        await #expect(throws: (any Error).self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(10))  // not the scripted 30 s
        #expect(server.closedByClientCount(for: "/forever") == 0)
        await #expect(throws: (any Error).self) { try await get(server.url("/forever")) }
    }
}
