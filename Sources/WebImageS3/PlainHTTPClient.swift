import Foundation
import Synchronization
import WebImage

/// A small HTTP/1.1 client for `http://` stores (MinIO, Ceph RGW, moto on a private network), used
/// by ``S3Client`` in place of URLSession there: a call is one blocking exchange on a kept-alive
/// socket, run on a worker thread of its own, with no hand-off between URLSession's threads and
/// queues (which cost an S3 hit as much as the store's own answer, `bench s3`). `https` endpoints
/// keep URLSession (TLS).
///
/// - **Threads**: ``workerCount`` threads of its own (started on first use, living as long as the
///   process) run the exchanges; a caller's task waits suspended, never blocking the cooperative pool.
/// - **Deadlines**: connect, send and every read are bounded by the call's deadline (`poll`), so a
///   store that stalls or trickles is cut at the time-out.
/// - **Cancellation**: a cancelled caller is answered at once; its socket is shut down, which ends
///   the worker's blocking call.
/// - **Connections**: kept alive and reused per host and port (at most ``maxIdlePerHost`` idle);
///   a reused connection the store closed meanwhile is retried once on a new one; a connection
///   whose answer was not read to its end is closed, never reused.
/// - **Answers**: `Content-Length` bodies (short ones are reported as cut), chunked bodies, bodies
///   ending with the connection; none for HEAD, 204 and 304. Headers are limited to 64 KiB and
///   bodies to ``maxBodyBytes``.
final class PlainHTTPClient: Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    static let workerCount = 8
    static let maxIdlePerHost = 8
    static let maxBodyBytes = 512 << 20

    static let shared = PlainHTTPClient()

    private let idle = Mutex<[String: [Int32]]>([:])
    private let workers = BlockingWorkers(count: PlainHTTPClient.workerCount)

    /// Sends `method` to `url` with `headers` (no `Host`, `Content-Length` or `Connection`: added
    /// here) and `body`, within `timeout`.
    func send(_ method: String, url: URL, headers: [String: String], body: Data?, timeout: Duration) async throws(S3Error) -> Response {
        guard let host = url.host, !host.isEmpty else { throw .transport("no host in \(url.absoluteString)") }
        let port = url.port ?? 80
        var target = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true), !query.isEmpty { target += "?" + query }
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(SignatureV4.hostHeader(url))\r\n"
        for (name, value) in headers where !value.contains("\r") && !value.contains("\n") { head += "\(name): \(value)\r\n" }
        if body != nil || method == "PUT" || method == "POST" { head += "Content-Length: \(body?.count ?? 0)\r\n" }
        head += "\r\n"
        let request = Data(head.utf8) + (body ?? Data())
        let deadline = ContinuousClock.now + timeout
        let exchange = Exchange()
        let result: Result<Response, S3Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Response, S3Error>, Never>) in
                exchange.set(continuation)
                workers.run { [self] in
                    exchange.finish(self.perform(request, host: host, port: port, isHead: method == "HEAD", deadline: deadline, exchange: exchange))
                }
            }
        } onCancel: {
            exchange.cancel()
        }
        return try result.get()
    }

    // MARK: On a worker thread

    private func perform(_ request: Data, host: String, port: Int, isHead: Bool, deadline: ContinuousClock.Instant,
                         exchange: Exchange) -> Result<Response, S3Error> {
        let hostKey = "\(host):\(port)"
        for attempt in 0..<2 {
            let reused = attempt == 0 ? takeIdle(hostKey) : nil
            let fd: Int32
            if let reused {
                fd = reused
            } else {
                switch Self.connect(host: host, port: port, deadline: deadline) {
                case .success(let socket): fd = socket
                case .failure(let error): return .failure(error)
                }
            }
            guard exchange.adopt(fd) else {
                close(fd)
                return .failure(.transport("cancelled"))
            }
            let outcome = Self.exchange(request, on: fd, isHead: isHead, deadline: deadline)
            exchange.release()
            switch outcome {
            case .success(let (response, reusable)):
                if reusable { putIdle(fd, hostKey) } else { close(fd) }
                return .success(response)
            case .failure(let failure):
                close(fd)
                if reused != nil, failure.beforeAnswer, !exchange.isCancelled { continue }   // the store closed a kept-alive connection
                return .failure(failure.error)
            }
        }
        return .failure(.transport("no connection"))
    }

    private func takeIdle(_ key: String) -> Int32? {
        idle.withLock { pool in pool[key]?.popLast() }
    }

    private func putIdle(_ fd: Int32, _ key: String) {
        let kept = idle.withLock { pool -> Bool in
            guard (pool[key]?.count ?? 0) < Self.maxIdlePerHost else { return false }
            pool[key, default: []].append(fd)
            return true
        }
        if !kept { close(fd) }
    }

    /// A connected, non-blocking TCP socket to `host:port` (every address `getaddrinfo` gives, in order).
    private static func connect(host: String, port: Int, deadline: ContinuousClock.Instant) -> Result<Int32, S3Error> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return .failure(.transport("cannotFindHost \(host)")) }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        var lastError = "cannotConnectToHost"
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return .success(fd) }
            if errno == EINPROGRESS {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&poller, 1, (deadline - .now).pollMilliseconds) == 1 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 { return .success(fd) }
                    lastError = "cannotConnectToHost (\(String(cString: strerror(error))))"
                } else {
                    lastError = "timedOut connecting"
                }
            }
            close(fd)
        }
        return .failure(.transport(lastError))
    }

    struct Failure: Error {
        var error: S3Error
        /// Nothing of an answer arrived: a kept-alive connection the store had closed.
        var beforeAnswer: Bool
    }

    /// Writes `request` and reads one answer; whether the connection can carry another.
    private static func exchange(_ request: Data, on fd: Int32, isHead: Bool, deadline: ContinuousClock.Instant)
        -> Result<(Response, Bool), Failure> {
        var reader = SocketReader(fd: fd, deadline: deadline)
        let sent = request.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                if written > 0 { offset += written; continue }
                if written < 0 && (errno == EAGAIN || errno == EINTR) {
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&poller, 1, (deadline - .now).pollMilliseconds) == 1 { continue }
                }
                return false
            }
            return true
        }
        guard sent else { return .failure(Failure(error: .transport("the connection closed while sending"), beforeAnswer: true)) }
        guard let headText = reader.readHead() else {
            return .failure(Failure(error: reader.error ?? .transport("no answer"), beforeAnswer: reader.received == 0))
        }
        let lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusParts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            return .failure(Failure(error: .transport("not an HTTP answer"), beforeAnswer: false))
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var keepsAlive = headers["connection"]?.lowercased() != "close" && statusParts[0] == "HTTP/1.1"
        var body = Data()
        if isHead || status == 204 || status == 304 || (100..<200).contains(status) {
            // no body
        } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
            guard let chunked = reader.readChunked() else { return .failure(Failure(error: reader.error ?? .malformed("bad chunks"), beforeAnswer: false)) }
            body = chunked
        } else if let length = headers["content-length"].flatMap(Int.init) {
            guard length >= 0, length <= maxBodyBytes else { return .failure(Failure(error: .malformed("a body of \(length) bytes"), beforeAnswer: false)) }
            guard let exact = reader.read(count: length) else {
                return .failure(Failure(error: .truncated(received: reader.bodyReceived, expected: length), beforeAnswer: false))
            }
            body = exact
        } else {
            guard let rest = reader.readToEnd(limit: maxBodyBytes) else { return .failure(Failure(error: reader.error ?? .malformed("body"), beforeAnswer: false)) }
            body = rest
            keepsAlive = false
        }
        if reader.hasBufferedBytes { keepsAlive = false }
        return .success((Response(status: status, headers: headers, body: body), keepsAlive))
    }
}

/// Reads from a socket within a deadline, through a buffer.
private struct SocketReader {
    let fd: Int32
    let deadline: ContinuousClock.Instant
    private var buffer: [UInt8] = []
    private var start = 0
    /// What one `recv(2)` reads into, kept for the whole answer.
    private var chunk = [UInt8](repeating: 0, count: 65536)
    private(set) var received = 0
    private(set) var bodyReceived = 0
    private(set) var error: S3Error?

    init(fd: Int32, deadline: ContinuousClock.Instant) {
        self.fd = fd
        self.deadline = deadline
    }

    var hasBufferedBytes: Bool { start < buffer.count }

    /// Reads more bytes into the buffer; false at the end, a failure or the deadline (`error` says which).
    private mutating func fill() -> Bool {
        if start > 0 && start == buffer.count { buffer.removeAll(keepingCapacity: true); start = 0 }
        while true {
            let left = deadline - .now
            guard left > .zero else { error = .transport("timedOut reading"); return false }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, left.pollMilliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready == 1 else { error = .transport("timedOut reading"); return false }
            let socket = fd
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                received += count
                return true
            }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            if count < 0 { error = .transport("networkConnectionLost") }
            return false
        }
    }

    /// The head (status line and headers) without its blank line, or nil.
    mutating func readHead() -> String? {
        while true {
            if let end = findHeadEnd() {
                let text = String(decoding: buffer[start..<end], as: UTF8.self)
                start = end + 4
                return text
            }
            guard buffer.count - start < 65536 else { error = .malformed("headers over 64 KiB"); return nil }
            guard fill() else { return nil }
        }
    }

    private func findHeadEnd() -> Int? {
        guard buffer.count - start >= 4 else { return nil }
        var index = start
        while index + 3 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 { return index }
            index += 1
        }
        return nil
    }

    mutating func read(count: Int) -> Data? {
        while buffer.count - start < count {
            bodyReceived = buffer.count - start
            guard fill() else { return nil }
        }
        let data = Data(buffer[start..<(start + count)])
        start += count
        bodyReceived = count
        return data
    }

    mutating func readLine() -> String? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 10) {
                let line = String(decoding: buffer[start..<newline], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
                start = newline + 1
                return line
            }
            guard buffer.count - start < 4096, fill() else { return nil }
        }
    }

    mutating func readChunked() -> Data? {
        var body = Data()
        while true {
            guard let line = readLine(), let size = Int(line.split(separator: ";").first ?? "", radix: 16), size >= 0 else { return nil }
            if size == 0 {
                while let trailer = readLine(), !trailer.isEmpty {}
                return body
            }
            guard body.count + size <= PlainHTTPClient.maxBodyBytes, let chunk = read(count: size), readLine() != nil else { return nil }
            body.append(chunk)
        }
    }

    mutating func readToEnd(limit: Int) -> Data? {
        while fill() { if buffer.count - start > limit { return nil } }
        if error != nil { return nil }
        let data = Data(buffer[start...])
        start = buffer.count
        return data
    }
}

/// One call's meeting point between its caller (resumed once), its worker (the socket it uses)
/// and a cancellation (which shuts the socket down so the worker's blocking call returns). Lock-based.
private final class Exchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>?
        var answered = false
        var cancelled = false
        var fd: Int32?
    }

    private let state = Mutex(State())

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func set(_ continuation: CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>) {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelled { state.answered = true; return true }
            state.continuation = continuation
            return false
        }
        if cancelled { continuation.resume(returning: .failure(.transport("cancelled"))) }
    }

    /// Records the socket in use; false when the call was cancelled already. The worker closes it
    /// only after ``release()``.
    func adopt(_ fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.fd = fd
            return true
        }
    }

    func release() {
        state.withLock { $0.fd = nil }
    }

    func finish(_ result: Result<PlainHTTPClient.Response, S3Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>? in
            guard !state.answered else { return nil }
            state.answered = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }

    func cancel() {
        let continuation = state.withLock { state -> CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>? in
            state.cancelled = true
            // Under the lock: the worker closes the socket only after `release()`, so the number
            // cannot name another connection yet. shutdown(2) does not block.
            if let fd = state.fd { shutdown(fd, Int32(SHUT_RDWR)) }
            guard !state.answered else { return nil }
            state.answered = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: .failure(.transport("cancelled")))
    }
}

/// A few threads that run blocking jobs (sockets), never the cooperative pool's. Each job is run by
/// one thread; the threads live as long as the process.
private final class BlockingWorkers: @unchecked Sendable {
    // @unchecked Sendable: `jobs` is only touched with `condition` locked; the threads are started once, in `init`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.loop() }
            thread.name = "webimage.s3-http-\(index)"
            thread.start()
        }
    }

    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func loop() {
        while true {
            condition.lock()
            // Blocks only these workers' own threads, never the cooperative pool's.
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
