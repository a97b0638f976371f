import CLibHiredis
import Foundation

/// One blocking hiredis connection, used only by the worker thread that owns it (a hiredis context
/// is not thread-safe). ``RedisNode`` gives each of its threads one.
///
/// What hiredis 0.14 (Debian bookworm) does, read in `hiredis.h`, `net.c` and its README:
/// - `redisConnectWithTimeout` resolves the host with `getaddrinfo` (blocking) and connects within
///   the timeout; it returns a context whose `err` is set on failure (`NULL` only without memory).
/// - `redisSetTimeout` sets `SO_RCVTIMEO`/`SO_SNDTIMEO`: a read or write blocks at most that long,
///   then fails with `REDIS_ERR_IO` (`EAGAIN`). Any error leaves the context unusable (`err` stays
///   set): the connection is freed and the next command connects again.
/// - It writes with `write(2)`, so a peer that has closed raises `SIGPIPE` in the writing thread.
///   The worker threads block `SIGPIPE` (`pthread_sigmask`): the write fails with `EPIPE` instead,
///   and the process's own signal handling is left as it is.
/// - A malformed reply is `REDIS_ERR_PROTOCOL`; an error reply (`-ERR …`) is a reply, not a failure.
/// - It never calls back: everything happens on the calling thread, in the calls below.
final class RedisConnection {
    private let endpoint: RedisEndpoint
    private let connectTimeout: Duration
    private let commandTimeout: Duration
    private var context: UnsafeMutablePointer<redisContext>?
    /// Whether the last reply came within ``replySpin`` (``awaitReply(_:)`` spins only then).
    private(set) var repliesComeFast = true

    init(endpoint: RedisEndpoint, connectTimeout: Duration, commandTimeout: Duration) {
        self.endpoint = endpoint
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
    }

    deinit {
        close()
    }

    /// Whether a connection is open (it may still have been closed by the server).
    var isOpen: Bool { context != nil }

    /// Frees the connection; the next ``run(_:)`` connects again.
    func close() {
        if let context { redisFree(context) }
        context = nil
    }

    /// Sends `commands` in one pipeline and returns their replies in order, connecting (and logging
    /// in) first when needed.
    /// - Throws: ``RedisError``: `connectionFailed`, `timedOut`, `connectionLost`; the connection is
    ///   closed then. Error replies are returned, not thrown.
    func run(_ commands: [[Data]]) throws(RedisError) -> [RedisReply] {
        if context == nil { try open() }
        guard let context else { throw .connectionFailed(endpoint: "\(endpoint)", reason: "no connection") }
        for command in commands {
            let appended = Self.withArguments(command) { count, arguments, lengths in
                redisAppendCommandArgv(context, count, arguments, lengths)
            }
            guard appended == REDIS_OK else { throw failure(context) }
        }
        try flush(context)
        awaitReply(context)
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else { throw failure(context) }
            let reply = raw.assumingMemoryBound(to: redisReply.self)
            replies.append(RedisReply(reply))
            freeReplyObject(raw)
        }
        return replies
    }

    /// Writes the pipeline out (what `redisGetReply` would do first), so that the wait for the reply
    /// can be timed and spun.
    private func flush(_ context: UnsafeMutablePointer<redisContext>) throws(RedisError) {
        var done: Int32 = 0
        repeat {
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw failure(context) }
        } while done == 0
    }

    /// Waits for the first reply's bytes by polling the socket (yielding the core each turn) for up
    /// to ``replySpin`` before `redisGetReply` blocks in `read`, but only while the replies of this
    /// connection come that fast: a reply from a Redis on this host or a fast network arrives in
    /// tens of microseconds, and a thread that slept for it is woken by an interrupt, which costs
    /// 20–30 µs on a virtual machine whose idle core has halted (`perf sched timehist`: a bare
    /// hiredis loop waited 23 µs to be scheduled after every reply). A Redis farther away than the
    /// spin never makes it spin again until a reply comes fast.
    private func awaitReply(_ context: UnsafeMutablePointer<redisContext>) {
        let start = ContinuousClock.now
        defer { repliesComeFast = ContinuousClock.now - start <= Self.replySpin }
        guard repliesComeFast else { return }
        var socket = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        let deadline = start + Self.replySpin
        while poll(&socket, 1, 0) == 0 && ContinuousClock.now < deadline { sched_yield() }
    }

    /// The longest ``awaitReply(_:)`` spins.
    static let replySpin: Duration = .microseconds(100)

    private func open() throws(RedisError) {
        let name = "\(endpoint)"
        guard let context = redisConnectWithTimeout(endpoint.host, Int32(clamping: endpoint.port), Self.timeval(connectTimeout)) else {
            throw .connectionFailed(endpoint: name, reason: "out of memory")
        }
        guard context.pointee.err == 0 else {
            let reason = Self.errorText(context)
            redisFree(context)
            throw .connectionFailed(endpoint: name, reason: reason)
        }
        redisSetTimeout(context, Self.timeval(commandTimeout))
        self.context = context
        var login: [[Data]] = []
        if let password = endpoint.password {
            login.append([Data("AUTH".utf8)] + (endpoint.user.map { [Data($0.utf8)] } ?? []) + [Data(password.utf8)])
        }
        if endpoint.database != 0 { login.append([Data("SELECT".utf8), Data("\(endpoint.database)".utf8)]) }
        guard !login.isEmpty else { return }
        let replies: [RedisReply]
        do {
            replies = try run(login)
        } catch {
            close()
            throw .connectionFailed(endpoint: name, reason: "\(error)")
        }
        if let refusal = replies.lazy.compactMap(\.errorText).first {
            close()
            throw .connectionFailed(endpoint: name, reason: refusal)
        }
    }

    /// The error of a failed call, after which the context is closed.
    private func failure(_ context: UnsafeMutablePointer<redisContext>) -> RedisError {
        let name = "\(endpoint)"
        let code = context.pointee.err
        let reason = Self.errorText(context)
        let timedOut = code == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || reason.contains("temporarily unavailable"))
        close()
        return timedOut ? .timedOut(endpoint: name) : .connectionLost(endpoint: name, reason: reason)
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// `duration` as a `timeval`: at least 1 ms, at most a day (never traps).
    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let seconds = min(max(duration.components.seconds, 0), 86_400)
        let microseconds = max(1000, seconds * 1_000_000 + max(duration.components.attoseconds, 0) / 1_000_000_000_000)
        return Glibc.timeval(tv_sec: Int(microseconds / 1_000_000), tv_usec: Int(microseconds % 1_000_000))
    }

    /// Calls `body` with C argument pointers into one contiguous copy of `arguments`.
    private static func withArguments(_ arguments: [Data],
                                      _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Int32) -> Int32 {
        var joined = [UInt8]()
        joined.reserveCapacity(arguments.reduce(1) { $0 + $1.count })
        var offsets: [Int] = []
        for argument in arguments {
            offsets.append(joined.count)
            joined.append(contentsOf: argument)
        }
        joined.append(0)   // a valid pointer even when every argument is empty
        let lengths = arguments.map(\.count)
        return joined.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return pointers.withUnsafeMutableBufferPointer { pointers in
                body(Int32(arguments.count), pointers.baseAddress!, lengths)
            }
        }
    }
}
