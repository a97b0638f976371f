import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

// A real HTTP/1.1 server on 127.0.0.1 for the network tests: scriptable per path, counting and recording
// what it receives. One request per connection (every response says `Connection: close`), one blocking
// `Thread` per connection (never the Swift cooperative pool), so a test can hold hundreds of slow
// responses open at once. A reply can also break HTTP on purpose (`TestResponse.Misbehavior`: resets,
// heads that never end, endless chunked bodies), and the server counts the bytes it sends per path.
// The socket plumbing lives in TestHTTPServerConnection.swift.

/// One scripted reply.
struct TestResponse: Sendable {
    /// How the `Content-Length` header is chosen.
    enum ContentLength: Sendable, Equatable {
        /// `Content-Length: body.count`, unless `headers` already has a Content-Length (then that one is
        /// sent as given) or the status has no body (1xx, 204, 304).
        case automatic
        /// `Content-Length: n` whatever the body is, so a test can lie in either direction.
        case exactly(Int)
        /// No Content-Length from the server: the body ends when the connection closes.
        case omitted
    }

    /// A hostile server's ways of breaking HTTP, beyond lying about the length or closing early.
    enum Misbehavior: Sendable, Equatable {
        /// Sends the head and the first `n` body bytes (all of `body` if it is shorter; dripped if
        /// `drip` says so), waits 20 ms (so they reach the client), then resets the connection:
        /// `SO_LINGER` 0 and close, a TCP RST where the client would otherwise see an orderly end.
        case resetAfterBodyBytes(Int)
        /// Sends the head and the first `n` body bytes (all of `body` if it is shorter), then nothing
        /// more until the client goes away: a server that hangs in the middle of a body.
        case stallAfterBodyBytes(Int)
        /// Sends the status line and `headers`, then one more header line every `interval` (at full
        /// speed for `.zero`), never the blank line that ends the head, until the client goes away.
        case endlessHeaderLines(interval: Duration)
        /// Sends the status line and `headers` without the blank line that ends the head, then sends
        /// nothing more until the client goes away.
        case unterminatedHeaders
        /// `Transfer-Encoding: chunked` (no Content-Length): `body` as the first chunk if it is not
        /// empty, then chunks of `chunkSize` filler bytes, one every `interval` (at full speed for
        /// `.zero`), never the last chunk, until the client goes away.
        case endlessChunkedBody(chunkSize: Int, interval: Duration)
    }

    var status: Int = 200
    /// Sent as given, in order, before the server's own `Content-Length` and `Connection: close`.
    var headers: [(String, String)] = []
    var body: Data = Data()
    /// Wait this long after reading the request before sending anything.
    var delayBeforeHeaders: Duration = .zero
    /// Send the body in pieces of `chunkSize` bytes, waiting `interval` before each piece (so n pieces take
    /// at least n × interval after the headers). Each piece is its own `send` on a TCP_NODELAY socket.
    var drip: (chunkSize: Int, interval: Duration)? = nil
    /// Send only this many body bytes, then close the connection (whatever Content-Length promised).
    var closeAfterBodyBytes: Int? = nil
    var contentLength: ContentLength = .automatic
    /// Break the protocol this way instead of sending a well-formed reply; `nil` (the default) for none.
    var misbehavior: Misbehavior? = nil
    /// Answer a `Range: bytes=N-` (or `bytes=N-M`) request as a server with byte ranges would (see
    /// `answering(_:)` in TestHTTPServerRanges.swift): `206` with `Content-Range` and that slice of
    /// `body`, `416` past its end, the whole `200` when `If-Range` does not match the reply's `ETag` or
    /// `Last-Modified`. Only a 200 reply without misbehaviour is sliced; `closeAfterBodyBytes` and
    /// `drip` apply to the slice. It adds no `Accept-Ranges`: `headers` decides what the reply
    /// advertises, so a test can model a server that advertises ranges and ignores them. Default false.
    var servesRanges: Bool = false

    init(
        status: Int = 200,
        headers: [(String, String)] = [],
        body: Data = Data(),
        delayBeforeHeaders: Duration = .zero,
        drip: (chunkSize: Int, interval: Duration)? = nil,
        closeAfterBodyBytes: Int? = nil,
        contentLength: ContentLength = .automatic,
        misbehavior: Misbehavior? = nil,
        servesRanges: Bool = false
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.delayBeforeHeaders = delayBeforeHeaders
        self.drip = drip
        self.closeAfterBodyBytes = closeAfterBodyBytes
        self.contentLength = contentLength
        self.misbehavior = misbehavior
        self.servesRanges = servesRanges
    }

    /// A redirect to `location` (absolute URL or a path on this server).
    static func redirect(to location: String, status: Int = 302) -> TestResponse {
        TestResponse(status: status, headers: [("Location", location)])
    }

    /// A `text/plain` UTF-8 reply.
    static func text(_ s: String, status: Int = 200) -> TestResponse {
        TestResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")], body: Data(s.utf8))
    }

    /// Bytes with a content type, e.g. an image.
    static func data(_ body: Data, contentType: String, status: Int = 200) -> TestResponse {
        TestResponse(status: status, headers: [("Content-Type", contentType)], body: body)
    }

    /// The value of the first header named `name` (case-insensitive) in `headers`.
    func header(_ name: String) -> String? {
        headers.first { $0.0.caseInsensitiveCompare(name) == .orderedSame }?.1
    }
}

/// A request as the server read it.
struct RecordedRequest: Sendable {
    var method: String
    /// The request target as sent, query included ("/a/b?c=d").
    var path: String
    /// Names lower-cased; repeated headers joined with ", ".
    var headers: [String: String]
    /// The body (Content-Length or chunked), empty if none.
    var body: Data

    /// `path` without its query.
    var pathWithoutQuery: String { String(path.prefix { $0 != "?" }) }
}

/// An error setting up the listening socket.
struct TestHTTPServerError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "TestHTTPServer: \(call) failed: \(String(cString: strerror(code)))" }
}

/// A real HTTP/1.1 server on 127.0.0.1, an ephemeral port, serving from `init` until `stop()` or deinit.
final class TestHTTPServer: Sendable {
    let port: Int
    private let core: TestHTTPServerCore

    /// Binds 127.0.0.1 on an ephemeral port and starts serving at once.
    init() throws {
        core = try TestHTTPServerCore()
        port = core.port
        core.start()
    }

    deinit { core.stop() }

    /// "http://127.0.0.1:PORT" + path.
    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)")!
    }

    /// A fixed reply for `path`. Matches on the path without its query unless `path` includes "?" (then
    /// only that exact target matches, and it wins over a route without query). Replaces any earlier
    /// route for the same path.
    func route(_ path: String, _ response: TestResponse) {
        core.setRoute(path, .fixed(response))
    }

    /// A reply computed per request (e.g. ETag / If-None-Match → 304). Runs on the connection's own
    /// thread, so it may block. Capture state (a `Mutex`), not the server: the server keeps its routes,
    /// so a handler holding the server would keep it (and its threads) alive past the test.
    func route(_ path: String, _ handler: @escaping @Sendable (RecordedRequest) -> TestResponse) {
        core.setRoute(path, .dynamic(handler))
    }

    /// Replies with `responses` in turn; once they run out, the last one again.
    func route(_ path: String, sequence responses: [TestResponse]) {
        precondition(!responses.isEmpty, "route(_:sequence:) needs at least one response")
        let next = Mutex(0)
        route(path) { _ in
            responses[next.withLock { index in
                defer { index += 1 }
                return min(index, responses.count - 1)
            }]
        }
    }

    /// Requests received for `path` (query ignored unless `path` includes "?"), counted once the whole
    /// request has been read, before the reply.
    func requestCount(for path: String) -> Int {
        core.withState { state in state.requests.count { Self.matches(path, $0.path) } }
    }

    var totalRequestCount: Int { core.withState { $0.requests.count } }

    /// The requests for `path` (same matching as `requestCount(for:)`), oldest first.
    func requests(for path: String) -> [RecordedRequest] {
        core.withState { state in state.requests.filter { Self.matches(path, $0.path) } }
    }

    /// Responses to `path` the client abandoned (peer closed, or a write failed) before the server had
    /// sent all it meant to. The server watches the socket during `delayBeforeHeaders` and between drip
    /// pieces, so a close is noticed within milliseconds. A scripted `closeAfterBodyBytes` is the
    /// server's doing and does not count; nor do connections `stop()` cuts. (A client that half-closes
    /// its side after sending the request looks like one that left; URLSession/curl never do.)
    func closedByClientCount(for path: String) -> Int {
        core.withState { state in state.abandoned.count { Self.matches(path, $0) } }
    }

    /// Bytes of the responses to `path` (same matching as `requestCount(for:)`) that the kernel accepted
    /// from the server, head, body and chunk framing included: a bound on what the client can have read.
    func bytesSent(for path: String) -> Int {
        core.withState { state in state.bytesSent.reduce(0) { $0 + (Self.matches(path, $1.key) ? $1.value : 0) } }
    }

    /// Connections currently open (accepted and not yet closed by the server).
    func activeConnectionCount() -> Int { core.withState { $0.connections.count } }

    /// The most connections that were open at the same time.
    var peakConnectionCount: Int { core.withState { $0.peakConnections } }

    /// How many connections it has accepted in all.
    var acceptedConnectionCount: Int { core.withState { $0.nextConnectionID } }

    /// Polls `condition` every 5 ms until it holds or `timeout` passes; returns whether it held. For
    /// waiting on the server's view of things (e.g. `closedByClientCount`) without fixed sleeps. The
    /// timeout is generous because a loaded machine (the whole suite on two cores) can starve a test for
    /// many seconds; a passing wait returns as soon as the condition holds.
    func waitUntil(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout * testTimeScale
        while !condition() {
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Closes the listener and every connection, and waits (up to 5 s) for their threads to finish.
    /// Idempotent; also runs in deinit.
    func stop() { core.stop() }

    /// A pattern ending in `*` matches every path that starts with the rest of it.
    private static func matches(_ pattern: String, _ target: String) -> Bool {
        if pattern.hasSuffix("*") { return target.hasPrefix(pattern.dropLast()) }
        return pattern.contains("?") ? pattern == target : pattern == String(target.prefix { $0 != "?" })
    }
}

/// The state every thread shares. The accept and connection threads retain this, not the
/// `TestHTTPServer`, so dropping the last reference to the server runs its deinit (which stops them).
final class TestHTTPServerCore: Sendable {
    enum Route: Sendable {
        case fixed(TestResponse)
        case dynamic(@Sendable (RecordedRequest) -> TestResponse)
    }

    struct State {
        var routes: [String: Route] = [:]
        var requests: [RecordedRequest] = []
        /// Request targets of abandoned responses.
        var abandoned: [String] = []
        /// Response bytes sent, by request target.
        var bytesSent: [String: Int] = [:]
        /// Open connections by id. A connection thread removes its entry (under the lock) *before* it
        /// closes the descriptor, and `stop()` only shuts down descriptors still listed (under the lock),
        /// so `stop()` can never touch a descriptor number the kernel has already reused.
        var connections: [Int: Int32] = [:]
        var nextConnectionID = 0
        var peakConnections = 0
        var stopped = false
        /// Same rule for the listening socket: closed (by the accept thread) under the lock.
        var listenerClosed = false
        var acceptThreadRunning = false
    }

    let port: Int
    let listenFD: Int32
    private let state = Mutex(State())

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPServerError(call: "socket", code: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw TestHTTPServerError(call: "bind", code: code)
        }
        guard listen(fd, 1024) == 0 else {
            let code = errno
            close(fd)
            throw TestHTTPServerError(call: "listen", code: code)
        }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            close(fd)
            throw TestHTTPServerError(call: "getsockname", code: code)
        }
        listenFD = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func withState<R>(_ body: (inout State) -> R) -> R {
        state.withLock { body(&$0) }
    }

    func setRoute(_ path: String, _ route: Route) {
        state.withLock { $0.routes[path] = route }
    }

    func start() {
        state.withLock { $0.acceptThreadRunning = true }
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "TestHTTPServer.accept:\(port)"
        thread.stackSize = 256 << 10
        thread.start()
    }

    func stop() {
        state.withLock { state in
            state.stopped = true
            // shutdown (not close) wakes a thread blocked in accept/recv/send/poll on that descriptor;
            // the owning thread closes it.
            if !state.listenerClosed { shutdown(listenFD, Int32(SHUT_RDWR)) }
            for fd in state.connections.values { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        let deadline = ContinuousClock.now + .seconds(5) * testTimeScale
        while ContinuousClock.now < deadline {
            let done = state.withLock { !$0.acceptThreadRunning && $0.connections.isEmpty }
            if done { return }
            usleep(1_000)
        }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        defer {
            state.withLock { state in
                close(listenFD)
                state.listenerClosed = true
                state.acceptThreadRunning = false
            }
        }
        while true {
            // Glibc's module does not import accept4, so mark close-on-exec right after. (Connections are
            // ended with shutdown(), so a descriptor leaked into a child process spawned in between does
            // not keep the client waiting.)
            let fd = accept(listenFD, nil, nil)
            if fd >= 0 { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            if fd < 0 {
                let code = errno
                if isStopped { return }
                switch code {
                case EINTR, ECONNABORTED, EPROTO, EAGAIN:
                    continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    usleep(10_000)  // out of descriptors for a moment; let connections finish
                    continue
                default:
                    return
                }
            }
            let id: Int? = state.withLock { state in
                if state.stopped { return nil }
                let id = state.nextConnectionID
                state.nextConnectionID += 1
                state.connections[id] = fd
                state.peakConnections = max(state.peakConnections, state.connections.count)
                return id
            }
            guard let id else {
                close(fd)
                return
            }
            let thread = Thread { [self] in
                TestHTTPServerConnection(fd: fd, core: self).run()
                state.withLock { _ = $0.connections.removeValue(forKey: id) }
                close(fd)
            }
            thread.name = "TestHTTPServer.connection:\(id)"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Records `request` and picks its reply (404 for an unknown path).
    func reply(to request: RecordedRequest) -> TestResponse {
        let route: Route? = state.withLock { state in
            state.requests.append(request)
            return state.routes[request.path] ?? state.routes[request.pathWithoutQuery]
                ?? state.routes.first { $0.key.hasSuffix("*") && request.path.hasPrefix($0.key.dropLast()) }?.value
        }
        switch route {
        case .fixed(let response): return response.answering(request)
        case .dynamic(let handler): return handler(request).answering(request)
        case nil: return .text("Not Found: \(request.path)\n", status: 404)
        }
    }

    func recordSent(_ count: Int, for request: RecordedRequest) {
        state.withLock { $0.bytesSent[request.path, default: 0] += count }
    }

    func recordAbandoned(_ request: RecordedRequest) {
        state.withLock { state in
            if !state.stopped { state.abandoned.append(request.path) }
        }
    }
}
