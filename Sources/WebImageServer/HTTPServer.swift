import CHTTPServer
import Foundation
import Synchronization

/// One request as the server hands it to its handler.
struct HTTPRequest: Sendable {
    var method: String
    /// The path as the client sent it: not percent-decoded, without the query.
    var path: String
    var accept: String?
    var ifNoneMatch: String?
    var authorization: String? = nil
    /// The client hints, as imgproxy reads them: `Sec-CH-DPR`, else `DPR` (above 0, at most 8), and
    /// `Sec-CH-Width`, else `Width` (above 0); `nil` when absent or unreadable.
    var hintedDPR: Double? = nil
    var hintedWidth: Int? = nil

    /// The first of `values` that `read` accepts.
    static func hint<T>(_ values: [UnsafePointer<CChar>?], _ read: (String) -> T?) -> T? {
        for value in values {
            if let value, let read = read(String(cString: value)) { return read }
        }
        return nil
    }
}

/// One answer: a status, headers, and a body (`Content-Length` is set by libmicrohttpd).
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: Data

    /// A plain-text answer; an error (4xx, 5xx) also says `Cache-Control: no-cache`, so no CDN keeps
    /// a failure (a 404 without it may be cached by heuristics, RFC 9111 4.2.2).
    static func text(_ status: Int, _ text: String, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        let noCache: [(name: String, value: String)] = status >= 400 && !headers.contains { $0.name == "Cache-Control" }
            ? [("Cache-Control", "no-cache")] : []
        return HTTPResponse(status: status, headers: [("Content-Type", "text/plain; charset=utf-8")] + noCache + headers,
                            body: Data((text + "\n").utf8))
    }
}

/// What the HTTP layer does with a request, as its dispatcher decides on libmicrohttpd's thread
/// (without blocking): answer it there and then, or suspend it and answer it with what `work`
/// returns, in a task of its own on `executor`.
enum HTTPDispatch: Sendable {
    /// An answer that needs no waiting (a variant in memory, `/health`, a refusal).
    case answer(HTTPResponse)
    /// Work to run in a task on `executor`. When the server has closed by then, the request is
    /// answered 503, `work` never runs and `abandon` is called instead (on MHD's thread), to give
    /// back what was taken for `work` (a cold thread's reservation).
    case task(on: any TaskExecutor, work: @Sendable () async -> HTTPResponse, abandon: @Sendable () -> Void)
}

/// libmicrohttpd's daemon (through `CHTTPServer`), bridged to async Swift. Each request is first
/// handed to the synchronous dispatcher on MHD's thread (``HTTPDispatch``): an answer that needs no
/// waiting (a variant in memory, `/health`) is queued there and then, with no other thread involved.
/// Any other request is suspended on MHD's thread, handled in a task of its own (on the executor
/// the dispatcher named), and resumed with its answer. No MHD thread ever waits for Swift, and no
/// Swift task ever blocks on MHD (see `CHTTPServer.h` for what libmicrohttpd guarantees).
///
/// Every request handed out is answered exactly once: by its task, or, when ``stop(drainingFor:)``
/// runs out of time, with a 503 (the task's late answer is then dropped). That keeps MHD's rule that
/// no connection is suspended when the daemon stops.
final class HTTPServer: Sendable {
    /// What the C callback reaches: the dispatcher and the requests not yet answered.
    ///
    /// `@unchecked Sendable`: the dispatcher is an immutable `@Sendable` closure, and `pending` (the
    /// addresses of `chttp_request`s handed out and not yet answered, and whether the server has
    /// closed) is only touched under its `Mutex`; an address leaves `pending` exactly once, by
    /// whoever answers it, before `chttp_respond` (after which MHD may free the request).
    final class Core: @unchecked Sendable {
        struct Pending {
            var requests: Set<UInt> = []
            /// Set by `stop` once it has answered what was pending: later requests (a keep-alive
            /// connection's next one) are answered 503 at once, never handed to a task that could
            /// outlive the daemon.
            var isClosed = false
        }

        let dispatcher: @Sendable (HTTPRequest) -> HTTPDispatch
        let pending = Mutex(Pending())
        /// The drain's waits: for `pending` to empty, and for MHD to have written every answer.
        let waiters = ConditionWaiters()

        init(dispatcher: @escaping @Sendable (HTTPRequest) -> HTTPDispatch) {
            self.dispatcher = dispatcher
        }

        /// Answers the request at `address` unless it was answered already.
        func answer(_ address: UInt, with response: HTTPResponse) {
            guard pending.withLock({ $0.requests.remove(address) != nil }), let request = OpaquePointer(bitPattern: address) else { return }
            Self.send(response, to: request)
            waiters.notify()
        }

        static func send(_ response: HTTPResponse, to request: OpaquePointer) {
            let names = response.headers.map { strdup($0.name) }, values = response.headers.map { strdup($0.value) }
            defer { (names + values).forEach { free($0) } }
            let namePointers = names.map { UnsafePointer($0) }, valuePointers = values.map { UnsafePointer($0) }
            response.body.withUnsafeBytes { body in
                chttp_respond(request, UInt32(response.status), namePointers, valuePointers, response.headers.count,
                              body.baseAddress?.assumingMemoryBound(to: UInt8.self), body.count)
            }
        }
    }

    /// `@unchecked Sendable` box of the C server handle: set once in `init`, then only passed to
    /// `chttp_port` and `chttp_realtime_threads` (reads; the latter under `stopped`'s lock while not
    /// stopped), `chttp_quiesce` and `chttp_stop` (each called once, by `stop`, which the `stopped`
    /// flag makes run once).
    private struct Handle: @unchecked Sendable {
        let server: OpaquePointer
    }

    private let handle: Handle
    private let core: Core
    private let stopped = Mutex(false)
    /// The port it listens on.
    let port: UInt16

    struct Config {
        var bindAddress = "127.0.0.1"
        var port: UInt16 = 8080
        var threads: UInt32 = 2
        var connectionLimit: UInt32 = 4096
        var idleTimeoutSeconds: UInt32 = 15
        /// Per connection: request line and headers (libmicrohttpd answers 414/431 past it).
        var memoryLimit = 64 * 1024
        /// Above 0: MHD's threads run in SCHED_RR at this priority (each applies it before its first
        /// request); 0: they keep the policy of the thread that started the server.
        var realtimePriority: Int32 = 0
        /// The scheduling slice MHD's threads of the normal class take before their first request
        /// (``ThreadPoolExecutor/answeringSlice``); 0 keeps the kernel's default.
        var sliceNanoseconds = ThreadPoolExecutor.answeringSlice
        /// Whether the listening socket is `SO_REUSEPORT`, so that several processes share the port.
        var reusesPort = false
    }

    /// Starts listening. `dispatcher` runs on MHD's threads and must not block: it returns an answer
    /// it can give at once, or the work that answers in a task, and where that task runs.
    /// - Throws: ``ServerError/cannotListen(_:)``.
    init(config: Config, dispatcher: @escaping @Sendable (HTTPRequest) -> HTTPDispatch) throws(ServerError) {
        let core = Core(dispatcher: dispatcher)
        var error = [CChar](repeating: 0, count: 256)
        let started = config.bindAddress.withCString { bind in
            var settings = chttp_config(bind_address: bind, port: config.port, threads: config.threads, connection_limit: config.connectionLimit,
                                        timeout_seconds: config.idleTimeoutSeconds, memory_limit: config.memoryLimit,
                                        realtime_priority: config.realtimePriority, slice_ns: UInt(config.sliceNanoseconds),
                                        reuse_port: config.reusesPort ? 1 : 0)
            return chttp_start(&settings, HTTPServer.dispatch, HTTPServer.idle, Unmanaged.passUnretained(core).toOpaque(),
                               &error, error.count)
        }
        guard let started else { throw .cannotListen(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
        self.core = core
        self.handle = Handle(server: started)
        self.port = chttp_port(started)
    }

    /// MHD threads that run in SCHED_RR (``Config/realtimePriority``): those that have served a
    /// request; 0 once ``stop(drainingFor:)`` has begun (read under `stopped`'s lock, so never after
    /// `chttp_stop` has freed the server).
    var realtimeThreadCount: Int {
        stopped.withLock { stopped in stopped ? 0 : chttp_realtime_threads(handle.server) }
    }

    /// Called by libmicrohttpd on its thread, the connection not suspended: copies the request, answers
    /// it at once when the dispatcher can, else suspends the connection and starts the request's task.
    private static let dispatch: chttp_handler = { context, request, info in
        guard let context, let request, let info = info?.pointee else { return }
        let core = Unmanaged<Core>.fromOpaque(context).takeUnretainedValue()
        let copy = HTTPRequest(method: String(cString: info.method), path: String(cString: info.path),
                               accept: info.accept.map { String(cString: $0) }, ifNoneMatch: info.if_none_match.map { String(cString: $0) },
                               authorization: info.authorization.map { String(cString: $0) },
                               hintedDPR: HTTPRequest.hint([info.sec_ch_dpr, info.dpr]) { Double($0).flatMap { $0 > 0 && $0 <= 8 ? $0 : nil } },
                               hintedWidth: HTTPRequest.hint([info.sec_ch_width, info.width]) { Int($0).flatMap { $0 > 0 ? $0 : nil } })
        let (executor, work, abandon): (any TaskExecutor, @Sendable () async -> HTTPResponse, @Sendable () -> Void)
        switch core.dispatcher(copy) {
        case .answer(let response): return Core.send(response, to: request)
        case .task(let on, let task, let abandoned): (executor, work, abandon) = (on, task, abandoned)
        }
        chttp_suspend(request)   // before anything that may answer from another thread
        let address = UInt(bitPattern: request)
        let accepted = core.pending.withLock { pending in
            guard !pending.isClosed else { return false }
            pending.requests.insert(address)
            return true
        }
        guard accepted else {
            abandon()
            return Core.send(.text(503, "the server is stopping"), to: request)
        }
        Task(executorPreference: executor) {
            let response = await work()
            core.answer(address, with: response)
        }
    }

    /// Called by libmicrohttpd on its thread when no request is open any more: wakes the drain.
    private static let idle: chttp_idle_handler = { context in
        guard let context else { return }
        Unmanaged<Core>.fromOpaque(context).takeUnretainedValue().waiters.notify()
    }

    /// Stops accepting connections, waits up to `drain` for the requests under way (woken by each
    /// answer, not polling), answers any left with 503, waits for MHD to write the answers, and
    /// stops libmicrohttpd. Runs once; later calls return at once. Not cut short by cancellation.
    func stop(drainingFor drain: Duration) async {
        guard stopped.withLock({ state in defer { state = true }; return !state }) else { return }
        chttp_quiesce(handle.server)
        let core = self.core, handle = self.handle
        _ = await core.waiters.wait(upTo: drain) { core.pending.withLock { $0.requests.isEmpty } }
        let left = core.pending.withLock { pending in
            defer {
                pending.requests.removeAll()
                pending.isClosed = true
            }
            return pending.requests
        }
        for address in left {
            if let request = OpaquePointer(bitPattern: address) { Core.send(.text(503, "the server is stopping"), to: request) }
        }
        // None is suspended any more. Give MHD's threads up to a second to write the answers just
        // given (MHD_stop_daemon closes connections without writing what is queued), then stop.
        _ = await core.waiters.wait(upTo: .seconds(1)) { chttp_open_requests(handle.server) == 0 }
        chttp_stop(handle.server)
        withExtendedLifetime(core) {}
    }

    /// Requests handed out and not yet answered.
    var pendingCount: Int { core.pending.withLock { $0.requests.count } }
}

/// Why the server could not start.
public enum ServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libmicrohttpd could not listen (address in use, not an address of this machine, ...).
    case cannotListen(String)
    /// The configuration is not usable (a key without a salt, a key that is not hex, neither a key nor `unsigned`).
    case invalidConfiguration(String)
    /// ``ImageServer/run(onListening:)`` was called on a server that runs or ran already.
    case alreadyRunning

    /// One line for logs and the command line.
    public var description: String {
        switch self {
        case .cannotListen(let reason): "cannot listen: \(reason)"
        case .invalidConfiguration(let reason): "invalid configuration: \(reason)"
        case .alreadyRunning: "the server runs or ran already; a server runs once"
        }
    }
}
