import Foundation
import Synchronization

/// A small HTTP/1.1 client for `http://` servers: an exchange is blocking calls on a kept-alive
/// socket, run on a worker thread of its own (``BlockingWorkers``), with no hand-off between
/// threads and queues. The downloader uses it for `http://` sources and the object store for
/// `http://` endpoints, where URLSession's hops cost as much as the transfer (`https` keeps
/// URLSession: TLS).
///
/// - **Deadlines**: connect, send and every read are bounded by the exchange's deadline and by the
///   time allowed between two reads (`poll`), so a server that stalls or trickles is cut.
/// - **Cancellation**: ``HTTP1Cancellation`` shuts the socket down, which ends the worker's call,
///   connecting included (not a name lookup: `getaddrinfo` cannot be interrupted).
/// - **Connections**: kept alive and reused per host and port (at most ``maxIdlePerHost`` idle per
///   host and ``maxIdle`` in all, none idle longer than ``idleLifetime``: older ones are closed when
///   the pool is next used); a reused connection that the server had closed meanwhile (nothing of an
///   answer arrived) is retried once on a new one; a connection whose answer was not read to its end
///   is closed.
/// - **Answers**: see ``HTTP1Reader``; informational answers are skipped.
package final class HTTP1Client: Sendable {
    /// One request: no `Content-Length` or `Connection` among `headers` (added here); `Host` is the
    /// URL's unless `headers` has one.
    package struct Request: Sendable {
        package var method: String
        package var url: URL
        package var headers: [(name: String, value: String)]
        package var body: Data?

        package init(method: String, url: URL, headers: [(name: String, value: String)], body: Data? = nil) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    package static let maxIdlePerHost = 8
    package static let maxIdle = 256
    package static let idleLifetime: Duration = .seconds(30)

    /// Kept-alive sockets by `host:port`, oldest first, with when each went idle.
    private struct IdlePool {
        var byHost: [String: [(fd: Int32, since: ContinuousClock.Instant)]] = [:]
        var count = 0

        /// Takes out every socket idle past ``HTTP1Client/idleLifetime`` (to be closed).
        mutating func expire(now: ContinuousClock.Instant) -> [Int32] {
            var expired: [Int32] = []
            for (key, sockets) in byHost {
                let fresh = sockets.filter { now - $0.since < HTTP1Client.idleLifetime }
                guard fresh.count < sockets.count else { continue }
                expired += sockets.filter { now - $0.since >= HTTP1Client.idleLifetime }.map(\.fd)
                byHost[key] = fresh.isEmpty ? nil : fresh
            }
            count -= expired.count
            return expired
        }
    }

    /// One per process: its threads (`webimage.http-N`, at most 64) and kept-alive connections.
    package static let shared = HTTP1Client()

    private let idle = Mutex(IdlePool())
    private let workers = BlockingWorkers(name: "webimage.http", maxThreads: 64)

    /// Runs `job` on one of the client's worker threads (where ``exchange(_:deadline:readTimeout:cancellation:onHead:onBody:)`` may block).
    package func run(_ job: @escaping @Sendable () -> Void) {
        workers.run(job)
    }

    /// Runs `job` on a worker thread idle now and returns true, else false and runs nothing (see
    /// ``BlockingWorkers/runOnIdleThread(_:)``: for callers that must not start a thread).
    package func runOnIdleWorker(_ job: @escaping @Sendable () -> Void) -> Bool {
        workers.runOnIdleThread(job)
    }

    /// Sends `request` and reads its answer, blocking the calling thread (a worker's: ``run(_:)``).
    /// `onHead` gets the final head (false: read no body); `onBody` each piece of the body as it
    /// arrives (false: read no more), valid only during the call (copy what is kept). Either
    /// refusal closes the connection. With `bodyRoom`, a body of known length is received straight
    /// into the caller's storage instead, as far as it takes it (``HTTP1BodyRoom``).
    /// `addressPolicy` (default unrestricted) is applied to every address a new connection is made
    /// to, after the name lookup that connection uses: ``HTTP1Error/addressRefused(address:reason:)``
    /// when it refuses one, before anything is sent.
    package func exchange(_ request: Request, deadline: ContinuousClock.Instant, readTimeout: Duration? = nil,
                          addressPolicy: SourceAddressPolicy = .unrestricted,
                          cancellation: HTTP1Cancellation, bodyRoom: HTTP1BodyRoom? = nil, onHead: (HTTP1Head) -> Bool,
                          onBody: (UnsafeRawBufferPointer) -> Bool) -> Result<Void, HTTP1Error> {
        guard let host = request.url.host, !host.isEmpty else { return .failure(.cannotFindHost("")) }
        let port = request.url.port ?? 80
        let key = "\(host):\(port)"
        let bytes = Self.serialize(request, host: host, port: port)
        for attempt in 0..<2 {
            let reused = attempt == 0 ? takeIdle(key) : nil
            let fd: Int32
            if let reused {
                fd = reused
            } else {
                switch Self.connect(host: host, port: port, deadline: deadline, policy: addressPolicy, cancellation: cancellation) {
                case .success(let socket): fd = socket
                case .failure(let error): return .failure(error)
                }
            }
            guard cancellation.adopt(fd) else {
                close(fd)
                return .failure(.cancelled)
            }
            var reader = HTTP1Reader(fd: fd, deadline: deadline, readTimeout: readTimeout)
            let outcome = Self.exchange(bytes, method: request.method, reader: &reader, onHead: onHead, bodyRoom: bodyRoom, onBody: onBody)
            cancellation.release()
            if cancellation.isCancelled {
                close(fd)
                return .failure(.cancelled)
            }
            switch outcome {
            case .success(let reusable):
                if reusable && !reader.hasBufferedBytes { keep(fd, key) } else { close(fd) }
                return .success(())
            case .failure(let error):
                close(fd)
                if reused != nil, reader.received == 0, error == .connectionLost { continue }   // the server closed a kept-alive connection
                return .failure(error)
            }
        }
        return .failure(.connectionLost)
    }

    /// Writes the request and reads one answer; whether the connection can carry another.
    private static func exchange(_ bytes: Data, method: String, reader: inout HTTP1Reader, onHead: (HTTP1Head) -> Bool,
                                 bodyRoom: HTTP1BodyRoom?, onBody: (UnsafeRawBufferPointer) -> Bool) -> Result<Bool, HTTP1Error> {
        guard send(bytes, on: reader.fd, deadline: reader.deadline) else { return .failure(.connectionLost) }
        let head: HTTP1Head
        switch reader.readHead() {
        case .success(let got): head = got
        case .failure(let error): return .failure(error)
        }
        guard onHead(head) else { return .success(false) }
        let framing = head.bodyFraming(forMethod: method)
        switch reader.readBody(framing, room: bodyRoom, deliver: onBody) {
        case .success(.complete): return .success(head.keepsAlive && framing != .untilClose)
        case .success(.stopped): return .success(false)
        case .failure(let error): return .failure(error)
        }
    }

    /// The most recently idle socket to `key`, after closing those idle too long.
    private func takeIdle(_ key: String) -> Int32? {
        let (taken, expired) = idle.withLock { pool -> (Int32?, [Int32]) in
            let expired = pool.expire(now: .now)
            guard let last = pool.byHost[key]?.popLast() else { return (nil, expired) }
            pool.count -= 1
            if pool.byHost[key]?.isEmpty == true { pool.byHost[key] = nil }
            return (last.fd, expired)
        }
        expired.forEach { close($0) }
        return taken
    }

    private func keep(_ fd: Int32, _ key: String) {
        let (kept, expired) = idle.withLock { pool -> (Bool, [Int32]) in
            let expired = pool.expire(now: .now)
            guard (pool.byHost[key]?.count ?? 0) < Self.maxIdlePerHost, pool.count < Self.maxIdle else { return (false, expired) }
            pool.byHost[key, default: []].append((fd, .now))
            pool.count += 1
            return (true, expired)
        }
        expired.forEach { close($0) }
        if !kept { close(fd) }
    }

    private static func serialize(_ request: Request, host: String, port: Int) -> Data {
        var target = URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = request.url.query(percentEncoded: true), !query.isEmpty { target += "?" + query }
        let givenHost = request.headers.first { $0.name.caseInsensitiveCompare("Host") == .orderedSame }?.value
        let hostField = givenHost ?? (host.contains(":") ? "[\(host)]" : host) + (port == 80 ? "" : ":\(port)")
        var head = "\(request.method) \(target) HTTP/1.1\r\nHost: \(hostField)\r\n"
        // A value with a line break would smuggle a header in: such fields are left out.
        for (name, value) in request.headers where name.caseInsensitiveCompare("Host") != .orderedSame
            && !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            head += "\(name): \(value)\r\n"
        }
        if request.body != nil || request.method == "PUT" || request.method == "POST" { head += "Content-Length: \(request.body?.count ?? 0)\r\n" }
        head += "\r\n"
        return Data(head.utf8) + (request.body ?? Data())
    }

    /// A connected, non-blocking TCP socket to `host:port` (every address `getaddrinfo` gives, in order),
    /// adopted by `cancellation` from its creation: a cancel shuts a connect in progress down, which
    /// ends the wait for it at once (a server that drops SYNs would otherwise hold the worker until
    /// the deadline). `getaddrinfo` itself cannot be interrupted: a name lookup runs to its end.
    ///
    /// Every address is checked against `policy` before any connect: one it refuses ends the attempt
    /// (the name answered differently from the lookup ``SourceAddressCheck`` made, or was never
    /// checked), as imgproxy checks the address its dialer connects to.
    private static func connect(host: String, port: Int, deadline: ContinuousClock.Instant, policy: SourceAddressPolicy,
                                cancellation: HTTP1Cancellation) -> Result<Int32, HTTP1Error> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else { return .failure(.cannotFindHost(host)) }
        defer { freeaddrinfo(list) }
        if policy != .unrestricted, let refused = policy.refusal(among: SourceAddressCheck.addresses(in: first)) {
            return .failure(.addressRefused(address: refused.address.description, reason: refused.reason))
        }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        var lastError = HTTP1Error.cannotConnect("no address")
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { continue }
            guard cancellation.adopt(fd) else {
                close(fd)
                return .failure(.cancelled)
            }
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return .success(fd) }
            if errno == EINPROGRESS {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&poller, 1, (deadline - .now).pollMilliseconds)
                if cancellation.isCancelled {
                    cancellation.release()
                    close(fd)
                    return .failure(.cancelled)
                }
                if ready == 1 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 { return .success(fd) }
                    lastError = .cannotConnect(String(cString: strerror(error)))
                } else {
                    lastError = .timedOut
                }
            } else {
                lastError = .cannotConnect(String(cString: strerror(errno)))
            }
            cancellation.release()
            close(fd)
        }
        return .failure(lastError)
    }

    /// Writes all of `bytes` within the deadline; false when the connection fails or the time is up.
    private static func send(_ bytes: Data, on fd: Int32, deadline: ContinuousClock.Instant) -> Bool {
        bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                if written > 0 { offset += written; continue }
                if written < 0 && (errno == EAGAIN || errno == EINTR) {
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    if poll(&poller, 1, (deadline - .now).pollMilliseconds) == 1 { continue }
                }
                return false
            }
            return true
        }
    }
}
