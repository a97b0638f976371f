import CSystemTuning
import Foundation
import Synchronization
import WebImage

/// An image server on GNU libmicrohttpd that answers imgproxy-style URLs with encoded variants
/// (``WebImage/WebImageManager/loadVariant(url:format:encoding:options:context:)``): cached in the
/// manager's memory and disk tiers, with the HTTP a CDN expects (`ETag` and 304s, `Cache-Control`,
/// `Vary: Accept`). What `webimage serve` runs.
///
/// Routes: `/health` (200 while serving, 503 while draining), `/metrics` (Prometheus), `/` (the demo
/// page, with ``ImageServerConfig/servesDemoPage``), and imgproxy paths
/// (``ProcessingPath``). Errors are short text bodies with the status a CDN understands.
///
/// Lifecycle, the shape swift-service-lifecycle drives: construct it (the configuration is checked
/// then), then ``run(onListening:)`` it in a task; cancelling that task stops it gracefully, and
/// `run` returns once the requests under way are answered. Shut the manager down after (it flushes
/// the disk cache's pending writes).
///
/// Where code runs: libmicrohttpd's threads accept, read and write, and answer what needs no
/// waiting (a variant in memory, `/health`, refusals); every other request runs in a task of its
/// own on the server's request executor (``ThreadPoolExecutor/requests``), or, an image request
/// that finds a cold thread free for it, on that thread from the start
/// (``ImageRequestHandler/dispatch(_:)``); the cold work of a request that holds a processing slot
/// runs on ``ThreadPoolExecutor/coldWork``'s lower-priority threads. The README's "Where code
/// runs" table lists every thread.
public final class ImageServer: Sendable {
    let manager: WebImageManager
    let config: ImageServerConfig
    let metrics: ServerMetrics
    private let handler: ImageRequestHandler
    private let state = ServerState()
    /// The HTTP layer while ``run(onListening:)`` runs.
    private let http = Mutex<HTTPServer?>(nil)
    /// The Prometheus listener (``ImageServerConfig/prometheusListener``) while the server runs.
    private let prometheus = Mutex<HTTPServer?>(nil)
    private let hasRun = Atomic<Bool>(false)

    /// Checks the configuration and prepares the server; it listens once ``run(onListening:)`` runs.
    /// Nothing is changed on `manager`: the server's metrics are added as an observer while it runs
    /// (``WebImage/WebImageManager/addObserver(_:)``), beside the manager's own.
    /// - Throws: ``ServerError/invalidConfiguration(_:)`` for a key or salt that is not hex, a
    ///   preset that is not valid, automatic-quality settings that cannot be searched
    ///   (``AutoQualitySettings/automaticQuality()``), or ``ImageServerConfig/runsNetworkThreadsInRealTime`` in a
    ///   process that may not use the real-time class.
    public init(manager: WebImageManager, config: ImageServerConfig) throws(ServerError) {
        try Self.checkPresets(config)
        do {
            _ = try config.processingDefaults.autoQuality.automaticQuality()
        } catch {
            throw .invalidConfiguration(error.reason)
        }
        if config.runsNetworkThreadsInRealTime, wi_realtime_permitted(Self.realtimePriority) != 1 {
            throw .invalidConfiguration("real-time network threads: this process may not use SCHED_RR "
                                        + "(it needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least \(Self.realtimePriority))")
        }
        let keys: [ImageServerConfig.SigningKey] = switch config.signing {
        case .signed(let key, let salt): [ImageServerConfig.SigningKey(keyHex: key, saltHex: salt)]
        case .signedWithAnyOf(let pairs): pairs
        case .unsigned: []
        }
        if case .signedWithAnyOf([]) = config.signing { throw .invalidConfiguration("signing with any of no keys") }
        var signers: [ProcessingURLSigner] = []
        for (index, pair) in keys.enumerated() {
            do throws(ProcessingURLSigner.InvalidKey) {
                signers.append(try ProcessingURLSigner(keyHex: pair.keyHex, saltHex: pair.saltHex, signatureSize: config.signatureSize))
            } catch {
                throw .invalidConfiguration("--key/--salt\(keys.count > 1 ? " (pair \(index + 1))" : ""): \(error.reason)")
            }
        }
        self.manager = manager
        self.config = config
        metrics = ServerMetrics()
        handler = ImageRequestHandler(manager: manager, config: config, signers: signers, metrics: metrics,
                                      slots: ProcessingSlots(limit: config.maxInFlight, queueLimit: config.queueLimit, metrics: metrics),
                                      state: state, executors: Self.startExecutors())
    }

    /// The SCHED_RR priority of the network threads with ``ImageServerConfig/runsNetworkThreadsInRealTime``:
    /// the lowest, above every normal thread and below any real-time thread the system has.
    static let realtimePriority: Int32 = 1

    /// libmicrohttpd threads of the running server that have put themselves in the real-time class
    /// (a thread does so at its first request); 0 when it does not run.
    var realtimeNetworkThreadCount: Int { http.withLock { $0?.realtimeThreadCount ?? 0 } }

    /// Starts the process's two server executors if this is the first server, the requests' first:
    /// their threads are then made by this (normal-priority) thread, never by a cold one (a
    /// thread inherits its creator's nice value).
    private static func startExecutors() -> (requests: ThreadPoolExecutor, coldWork: ThreadPoolExecutor) {
        let requests = ThreadPoolExecutor.requests
        return (requests, ThreadPoolExecutor.coldWork)
    }

    /// The port of the Prometheus listener while the server runs (``ImageServerConfig/prometheusListener``;
    /// the free one picked for port 0); `nil` without one or before ``run(onListening:)`` listens.
    public var prometheusPort: UInt16? { prometheus.withLock { $0?.port } }

    /// The port it listens on while it runs (the configured one, or the free one picked for port
    /// 0); `nil` before ``run(onListening:)`` listens.
    public var port: UInt16? {
        let port = state.port
        return port == 0 ? nil : port
    }

    /// Listens and serves until the calling task is cancelled; then stops accepting (`/health`
    /// answers 503), lets the requests under way finish for up to ``ImageServerConfig/drainTimeout``,
    /// answers any left with 503, stops listening and returns. The drain is not cut short by the
    /// cancellation that started it. A server runs once.
    /// - Parameter onListening: called once with the port, as soon as the server listens (before
    ///   any request is answered); default: nothing.
    /// - Throws: ``ServerError/cannotListen(_:)`` when the address cannot be bound;
    ///   ``ServerError/alreadyRunning`` when the server runs or ran already.
    public func run(onListening: @Sendable (UInt16) -> Void = { _ in }) async throws(ServerError) {
        guard !hasRun.exchange(true, ordering: .relaxed) else { throw .alreadyRunning }
        let handler = self.handler
        // The Prometheus listener first: a main server that then fails to bind stops it again.
        let metricsServer = try config.prometheusListener.map { listener throws(ServerError) in
            // One thread; every answer is rendered there and then (a few kilobytes of text).
            try HTTPServer(config: HTTPServer.Config(bindAddress: listener.bindAddress, port: listener.port, threads: 1,
                                                     connectionLimit: 64)) { request in
                guard request.method == "GET" || request.method == "HEAD" else { return .answer(.text(405, "only GET and HEAD")) }
                guard request.path == "/metrics" else { return .answer(.text(404, "not found: metrics are at /metrics")) }
                return .answer(HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                                            body: Data(handler.renderedMetrics.utf8)))
            }
        }
        let http: HTTPServer
        do {
            http = try HTTPServer(config: HTTPServer.Config(bindAddress: config.bindAddress, port: config.port,
                                                            connectionLimit: UInt32(clamping: max(1, config.maxClients)),
                                                            idleTimeoutSeconds: UInt32(config.idleTimeoutSeconds),
                                                            realtimePriority: config.runsNetworkThreadsInRealTime ? Self.realtimePriority : 0,
                                                            reusesPort: config.reusesPort)) {
                handler.dispatch($0)
            }
        } catch {
            await metricsServer?.stop(drainingFor: .zero)
            throw error
        }
        prometheus.withLock { $0 = metricsServer }
        let registration = manager.addObserver(metrics)
        defer { registration.cancel() }
        self.http.withLock { $0 = http }
        state.listens(on: http.port)
        onListening(http.port)
        await waitForCancellation()
        state.startDraining()
        await http.stop(drainingFor: config.drainTimeout)
        self.http.withLock { $0 = nil }
        prometheus.withLock { $0 = nil }
        await metricsServer?.stop(drainingFor: .seconds(1))
    }

    /// Runs the server in a task of its own and returns once it listens, with its port and that task
    /// (cancel it to stop the server; its value throws what ``run(onListening:)`` threw). What
    /// `webimage serve` and the tests start a server with.
    /// - Throws: why it did not listen (``ServerError/cannotListen(_:)``, ``ServerError/alreadyRunning``).
    package func start() async throws -> (port: UInt16, running: Task<Void, any Error>) {
        let listening = AsyncStream<UInt16>.makeStream()
        let running = Task {
            defer { listening.continuation.finish() }   // also when it throws before listening
            try await run { port in listening.continuation.yield(port) }
        }
        var ports = listening.stream.makeAsyncIterator()
        guard let port = await ports.next() else {
            try await running.value   // throws why it did not listen
            throw ServerError.cannotListen("the server returned without listening")
        }
        return (port, running)
    }

    /// Applies every preset to an empty request, so a bad one stops the server at start (as imgproxy refuses to start).
    private static func checkPresets(_ config: ImageServerConfig) throws(ServerError) {
        for (name, _) in config.presets {
            let probe = ProcessingPath(signature: "-", signedPath: "/", optionSegments: ["pr\(config.urlParsing.argumentsSeparator)\(name)"],
                                       source: URL(string: "http://preset.check/")!, extensionText: nil)
            do {
                var parsing = config.urlParsing
                parsing.allowedProcessingOptions = []   // a preset may use any option
                _ = try ProcessingRequest(path: probe, presets: config.presets, allowsSecurityOptions: config.allowsSecurityOptions,
                                          defaults: config.processingDefaults, parsing: parsing)
            } catch let error as ProcessingPath.Invalid {
                throw .invalidConfiguration("preset \(name): \(error.reason)")
            } catch let error as ProcessingRequest.Forbidden {
                throw .invalidConfiguration("preset \(name): \(error.reason)")
            } catch {
                throw .invalidConfiguration("preset \(name): it has expired")
            }
        }
    }

    /// Requests handed to the handler and not yet answered (0 when not running).
    var pendingRequests: Int { http.withLock { $0?.pendingCount ?? 0 } }
}
