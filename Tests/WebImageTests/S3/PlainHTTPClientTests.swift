import Foundation
import Synchronization
import Testing
@testable import WebImageS3

/// WebImage's own HTTP/1.1 client for http:// stores, against a real HTTP server on 127.0.0.1 that
/// answers well and badly: bodies by length or to the end of the connection, none for HEAD and 304,
/// answers that stall, hang in their head or never end, cancellation, and a store that is down.
@Suite struct PlainHTTPClientTests {
    let server: TestHTTPServer
    let client = PlainHTTPClient.shared

    init() throws {
        server = try TestHTTPServer()
    }

    @Test func bodiesByLengthOrToTheEndAndNoneForHeadOr304() async throws {
        let body = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        server.route("/length", TestResponse(headers: [("ETag", "\"e\"")], body: body))
        server.route("/close", TestResponse(body: body, contentLength: .omitted))
        server.route("/not-modified", TestResponse(status: 304, body: Data()))
        for _ in 0..<3 {   // the same connection is kept and reused between calls
            let reply = try await client.send("GET", url: server.url("/length"), headers: ["X-Test": "1"], body: nil, timeout: .seconds(10))
            #expect(reply.status == 200 && reply.body == body && reply.headers["etag"] == "\"e\"")
        }
        #expect(try await client.send("GET", url: server.url("/close"), headers: [:], body: nil, timeout: .seconds(10)).body == body)
        let head = try await client.send("HEAD", url: server.url("/length"), headers: [:], body: nil, timeout: .seconds(10))
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == "300000")
        #expect(try await client.send("GET", url: server.url("/not-modified"), headers: [:], body: nil, timeout: .seconds(10)).status == 304)
        let sent = try await client.send("PUT", url: server.url("/length"), headers: [:], body: Data("abc".utf8), timeout: .seconds(10))
        #expect(sent.status == 200 && server.requests(for: "/length").last?.body == Data("abc".utf8))
    }

    @Test func badAnswersAreTypedErrorsWithinTheDeadline() async throws {
        server.route("/cut", TestResponse(body: Data(repeating: 1, count: 100_000), closeAfterBodyBytes: 1000))
        server.route("/stall", TestResponse(body: Data(repeating: 2, count: 100_000), misbehavior: .stallAfterBodyBytes(500)))
        server.route("/head", TestResponse(misbehavior: .unterminatedHeaders))
        server.route("/endless", TestResponse(misbehavior: .endlessChunkedBody(chunkSize: 100, interval: .milliseconds(10))))
        await #expect(throws: S3Error.truncated(received: 1000, expected: 100_000)) {
            try await client.send("GET", url: server.url("/cut"), headers: [:], body: nil, timeout: .seconds(10))
        }
        for path in ["/stall", "/head", "/endless"] {
            let started = ContinuousClock.now
            await #expect(throws: S3Error.self, "\(path)") {
                try await client.send("GET", url: server.url(path), headers: [:], body: nil, timeout: .milliseconds(400))
            }
            #expect(ContinuousClock.now - started < .seconds(30), "\(path) is cut at the deadline")
        }
        let down = try ClosedLoopbackPort()
        await #expect(throws: S3Error.self) {
            try await client.send("GET", url: URL(string: "http://127.0.0.1:\(down.port)/x")!, headers: [:], body: nil, timeout: .seconds(2))
        }
        withExtendedLifetime(down) {}
    }

    @Test func aCancelledCallerIsAnsweredAtOnce() async throws {
        server.route("/slow", TestResponse(body: Data("late".utf8), delayBeforeHeaders: .seconds(60)))
        let client = self.client, url = server.url("/slow")
        let call = Task { try await client.send("GET", url: url, headers: [:], body: nil, timeout: .seconds(120)) }
        try await waitUntil { server.requestCount(for: "/slow") == 1 }
        let started = ContinuousClock.now
        call.cancel()
        await #expect(throws: S3Error.self) { try await call.value }
        #expect(ContinuousClock.now - started < .seconds(30))
    }
}
