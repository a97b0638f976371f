import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bookkeeping of a ``Downloader``: which operations exist, which wait for a slot, which run.
///
/// The downloader engine, one idea per file:
///
/// - `Downloader.swift`: the public face (join a download, wait, leave when cancelled);
/// - `DownloadScheduler.swift` (this file): operations by request, the queue, the slots, launching;
/// - `DownloadOperation.swift`: one shared fetch: its waiters (a ``SharedWork`` machine), bytes, verdict;
/// - `DownloadQueue.swift`: the priority + FIFO/LIFO queue of operations waiting for a slot;
/// - `SessionDelegate.swift`: URLSession's callbacks, routed to operations;
/// - `CurlDownloadTask.swift`: a transfer over libcurl (`Loading/Curl/`: the engine thread, one transfer, the request);
/// - `TransferRouting.swift`: what both transports decide alike (a response's verdict, a redirect's answer);
/// - `DownloadTransportTask.swift`: the task an operation holds, whichever transport carries it;
/// - `DownloadDeadlines.swift`: the total time-out, to the millisecond, on one timer;
/// - `DownloadResumption.swift`, `PartialDownload.swift`, `PartialDownloadStore.swift`: resuming cut-short downloads;
/// - `DownloaderConfig.swift`, `DownloadEventStream.swift`, `DownloadReport.swift`, `RetryAfter.swift`: the rest of the surface.
///
/// It sits behind one `Mutex` rather than on an actor so that a caller joining and a download
/// finishing (on URLSession's delegate queue) cost no thread hop. Nothing is ever awaited or started
/// under the lock: work to launch is collected and done after it is released, on a serial queue of
/// its own (``launchQueue``). Invariants, checked after every change in debug builds: an operation
/// is never both queued and running, and every running one is in the table of operations or has
/// its verdict.
final class DownloadScheduler: Sendable {
    /// One configuration, shared by reference: the session delegate looks it up on every
    /// callback, and copying the struct each time (its dictionaries, sets and closures) showed in
    /// profiles of small downloads.
    final class Settings: Sendable {
        let config: DownloaderConfig

        init(_ config: DownloaderConfig) {
            self.config = config
        }
    }

    private struct State {
        var settings: Settings
        var config: DownloaderConfig { settings.config }
        var operations: [String: DownloadOperation] = [:]
        var queued = DownloadQueue()
        var running: [ObjectIdentifier: DownloadOperation] = [:]
        var sequence: UInt64 = 0
        var totalStarted = 0
        var isShutDown = false

        func checkInvariants() {
            #if DEBUG
            for (id, operation) in running {
                precondition(ObjectIdentifier(operation) == id, "DownloadScheduler: a running operation under another's id")
                precondition(!queued.contains(operation), "DownloadScheduler: an operation both queued and running")
            }
            #endif
        }
    }

    private let state: Mutex<State>
    /// Where finished downloads are reported (``Downloader/observer``).
    let observer = ObserverSlot()
    /// The partials of downloads cut short, for the next request of their URL to continue.
    let partials: PartialDownloadStore
    private let delegate = SessionDelegate()
    private let deadlines = DownloadDeadlines()
    private let session: URLSession
    private let cookieSession: URLSession

    init(config: DownloaderConfig) {
        state = Mutex(State(settings: Settings(config)))
        partials = PartialDownloadStore(limit: config.maxResumableDataBytes)
        session = Self.makeSession(delegate: delegate, cookies: false)
        cookieSession = Self.makeSession(delegate: delegate, cookies: true)
    }

    deinit {
        session.invalidateAndCancel()
        cookieSession.invalidateAndCancel()
    }

    private static func makeSession(delegate: SessionDelegate, cookies: Bool) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieStorage = cookies ? HTTPCookieStorage.shared : nil
        configuration.httpShouldSetCookies = cookies
        configuration.httpMaximumConnectionsPerHost = 64   // the scheduler enforces its own limits
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "WebImage.Downloader"
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// Finds the operation for `request` (creating and queueing it if none is under way) and reserves
    /// a caller's place in it; `nil` once the scheduler is shut down (decided under its lock, so no
    /// operation starts after ``shutdown()``).
    func join(_ request: ImageLoadRequest) -> (operation: DownloadOperation, waiterID: UInt64)? {
        let joined = state.withLock { state -> (DownloadOperation, UInt64, [Launch])? in
            guard !state.isShutDown else { return nil }
            let key = Self.key(for: request, config: state.config)
            let operation: DownloadOperation
            state.sequence += 1
            let waiterID = state.sequence
            if let existing = state.operations[key], existing.reserve(waiterID) {
                operation = existing
                if request.priority > operation.priority {
                    operation.raisePriority(to: request.priority)
                    state.queued.reprioritize(operation)
                }
            } else {
                state.sequence += 1
                operation = DownloadOperation(key: key, request: request, sequence: state.sequence,
                                              partials: partials) { [weak self] finished in
                    self?.finished(finished)
                }
                operation.reserve(waiterID)
                state.operations[key] = operation
                state.queued.append(operation)
            }
            let launches = Self.dequeue(&state)
            state.checkInvariants()
            return (operation, waiterID, launches)
        }
        guard let (operation, waiterID, launches) = joined else { return nil }
        launchSoon(launches)
        return (operation, waiterID)
    }

    /// The downloads whose total deadline is being watched (for tests).
    var watchedDeadlineCount: Int { deadlines.count }

    /// The callers waiting on the operation for `request` (for tests and diagnostics).
    func callerCount(for request: ImageLoadRequest) -> Int {
        state.withLock { state in state.operations[Self.key(for: request, config: state.config)]?.callerCount ?? 0 }
    }

    /// Frees the slot of a finished operation, starts the next queued ones, and reports the fetch.
    func finished(_ operation: DownloadOperation) {
        let launches = state.withLock { state in
            if state.operations[operation.key] === operation { state.operations[operation.key] = nil }
            state.queued.remove(operation)
            state.running[ObjectIdentifier(operation)] = nil
            let launches = Self.dequeue(&state)
            state.checkInvariants()
            return launches
        }
        deadlines.forget(operation)
        launchSoon(launches)
        observer.emit { .downloadFinished(operation.report) }
    }

    /// The configuration in force.
    var config: DownloaderConfig { state.withLock { $0.config } }
    /// Downloads running now.
    var runningCount: Int { state.withLock { $0.running.count } }
    /// Downloads waiting for a slot.
    var queuedCount: Int { state.withLock { $0.queued.count } }
    /// Network tasks started since the downloader was created.
    var startedCount: Int { state.withLock { $0.totalStarted } }
    /// Whether ``shutdown()`` was called.
    var isShutDown: Bool { state.withLock { $0.isShutDown } }

    /// Refuses new callers, cancels everything and invalidates the sessions, once. The sessions are
    /// invalidated on ``launchQueue``, where every network task is created, and ``sendTask`` checks
    /// the flag there first: FoundationNetworking traps ("Session invalidated") when a task is made
    /// on an invalidated session.
    func shutdown() async {
        let first = state.withLock { state in
            defer { state.isShutDown = true }
            return !state.isShutDown
        }
        guard first else { return }
        cancelAll()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            launchQueue.async {
                self.session.invalidateAndCancel()
                self.cookieSession.invalidateAndCancel()
                continuation.resume()
            }
        }
    }

    /// Where network tasks are created and resumed. Both calls wait for the URLSession's own work
    /// queue (about 70 µs per task here, measured), so they must not run where that wait hurts:
    /// on a caller's thread of the cooperative pool (two threads on a two-core machine) or on the
    /// delegate queue (every other download's callbacks would queue behind it). Moving them here
    /// took 1000 small downloads from 0.8× to 1.1–1.3× the speed of bare `URLSession.data(for:)`.
    ///
    /// One queue per downloader: a session whose queue is slow to answer (name resolution, say)
    /// must not hold up another downloader's starts.
    private let launchQueue = DispatchQueue(label: "WebImage.Downloader.launch")

    /// Launches `launches`. A download the libcurl transport carries with no request modifier starts
    /// at once on the calling thread: it only makes the transfer and hands it to ``CurlEngine`` (a
    /// lock and a wake-up; nothing blocks). The rest (URLSession's tasks, request modifiers) go
    /// through ``launchQueue``.
    private func launchSoon(_ launches: [Launch]) {
        guard !launches.isEmpty else { return }
        var others: [Launch] = []
        for item in launches {
            if Self.launchesDirectly(item) {
                start(item.operation, request: item.request, settings: item.settings)
            } else {
                others.append(item)
            }
        }
        if !others.isEmpty {
            let queued = others
            launchQueue.async { self.launch(queued) }
        }
    }

    /// Whether `item` goes to ``CurlDownloadTask`` as it stands and no request modifier can change that.
    private static func launchesDirectly(_ item: Launch) -> Bool {
        item.settings.config.requestModifier == nil && item.operation.request.requestModifier == nil
            && usesCurl(item.operation, request: item.request, transport: item.settings.config.transport)
    }

    /// Whether `request` of `operation` is carried by ``CurlDownloadTask`` rather than URLSession
    /// (which keeps the requests that handle cookies: its shared cookie storage).
    private static func usesCurl(_ operation: DownloadOperation, request: URLRequest, transport: DownloaderConfig.Transport) -> Bool {
        transport == .curl && !operation.request.handlesCookies && CurlDownloadTask.carries(request)
    }

    /// Changes the configuration and starts whatever a higher limit now allows; a lower
    /// ``DownloaderConfig/maxResumableDataBytes`` drops the partials that no longer fit.
    func updateConfig(_ change: (inout DownloaderConfig) -> Void) {
        let (launches, resumableLimit) = state.withLock { state in
            var config = state.settings.config
            change(&config)
            state.settings = Settings(config)
            let launches = Self.dequeue(&state)
            state.checkInvariants()
            return (launches, config.maxResumableDataBytes)
        }
        partials.setLimit(resumableLimit)
        launchSoon(launches)
    }

    /// Fails every operation with ``WebImageError/cancelled(url:)`` and forgets them.
    func cancelAll() {
        let all = state.withLock { state in
            let all = Array(state.operations.values)
            state.operations.removeAll()
            state.queued.removeAll()
            state.running.removeAll()
            state.checkInvariants()
            return all
        }
        deadlines.forgetAll()
        for operation in all { operation.fail(.cancelled(url: operation.url)) }
    }

    // MARK: - Starting downloads

    private struct Launch {
        var operation: DownloadOperation
        var request: URLRequest
        var settings: Settings
    }

    /// Takes queued operations into free slots (under the lock); the caller launches them after.
    private static func dequeue(_ state: inout State) -> [Launch] {
        var launches: [Launch] = []
        while state.running.count < max(state.config.maxConcurrentDownloads, 1) {
            let running = state.running
            let perHost = state.config.maxConcurrentDownloadsPerHost
            let next = state.queued.popNext(order: state.config.executionOrder) { candidate in
                guard let perHost else { return true }
                return running.values.lazy.filter { $0.url.host == candidate.url.host }.count < perHost
            }
            guard let operation = next else { break }
            state.running[ObjectIdentifier(operation)] = operation
            state.totalStarted += 1
            launches.append(Launch(operation: operation, request: makeURLRequest(for: operation.request, config: state.config),
                                   settings: state.settings))
        }
        return launches
    }

    private func launch(_ launches: [Launch]) {
        for item in launches {
            if item.settings.config.requestModifier != nil || item.operation.request.requestModifier != nil {
                let modifiers = [item.settings.config.requestModifier, item.operation.request.requestModifier].compactMap { $0 }
                Task {
                    var request: URLRequest? = item.request
                    for modifier in modifiers {
                        guard let current = request else { break }
                        request = await modifier(current)
                    }
                    let modified = request
                    self.launchQueue.async { self.start(item.operation, request: modified, settings: item.settings) }
                }
            } else {
                start(item.operation, request: item.request, settings: item.settings)
            }
        }
    }

    /// Starts `operation` with `request` (`nil`: a modifier refused it). On ``launchQueue``, or on
    /// any thread for a download of the libcurl transport (``launchSoon(_:)``).
    ///
    /// The source-address policy: libcurl checks every address it connects to, redirects included
    /// (``CurlDownloadTask``); for URLSession, and for libcurl through a proxy (which connects for
    /// it), the host is resolved and checked here first (``SourceAddressCheck``), and URLSession's
    /// redirects in ``TransferRouting/answerRedirect(to:operation:config:_:)``.
    private func start(_ operation: DownloadOperation, request: URLRequest?, settings: Settings) {
        guard !operation.isFinished else { return }
        guard var request else {
            operation.fail(.rejected(url: operation.url, reason: "the request modifier refused the request"))
            return
        }
        // Decided on the request as it will be sent: a modifier's own Range or validators rule resuming out.
        var restart: (@Sendable () -> Void)?
        if operation.prepareResumption(of: &request) {
            let plain = DownloadResumption.withoutRange(request)
            restart = { [weak self] in
                guard let self else { return }
                launchQueue.async { self.sendTask(for: operation, request: plain, settings: settings, deadline: nil, restart: nil) }
            }
        }
        let deadline = ContinuousClock.now + settings.config.downloadTimeout
        let curl = Self.usesCurl(operation, request: request, transport: settings.config.transport)
        let checkedByCurl = curl && request.url.map { settings.config.proxy.proxy(for: $0) == nil } ?? false
        guard let host = request.url?.host, settings.config.sourceAddressPolicy != .unrestricted, !checkedByCurl else {
            return sendTask(for: operation, request: request, settings: settings, deadline: deadline, restart: restart)
        }
        let ready = request, resend = restart
        SourceAddressCheck.check(host: host, policy: settings.config.sourceAddressPolicy) { [weak self] refused in
            guard let self else { return }
            if let refused {
                operation.fail(.sourceRefused(address: refused.address.description, reason: refused.reason, url: operation.url))
            } else if IPAddress(host) != nil || curl {
                // Answered at once (still on the launch queue), or for libcurl, which starts from any thread.
                sendTask(for: operation, request: ready, settings: settings, deadline: deadline, restart: resend)
            } else {
                launchQueue.async { self.sendTask(for: operation, request: ready, settings: settings, deadline: deadline, restart: resend) }
            }
        }
    }

    /// Creates, registers and resumes the network task of `operation`, watching `deadline` if given.
    /// `restart`, for a request that asks for the rest of a partial, sends it again without `Range`
    /// when the answer cannot continue the partial (under the first request's deadline).
    ///
    /// On ``launchQueue`` for URLSession's tasks; from any thread for libcurl's.
    private func sendTask(for operation: DownloadOperation, request: URLRequest, settings: Settings,
                          deadline: ContinuousClock.Instant?, restart: (@Sendable () -> Void)?) {
        guard !operation.isFinished else { return }
        guard !isShutDown else {   // the sessions are invalidated, or about to be, on the launch queue
            operation.fail(.shutDown(url: operation.url))
            return
        }
        if Self.usesCurl(operation, request: request, transport: settings.config.transport) {
            let task = CurlDownloadTask(operation: operation, config: settings.config, restart: restart)
            operation.started(task: task)
            if let deadline { deadlines.watch(operation, until: deadline) }
            return task.resume(request)
        }
        dispatchPrecondition(condition: .onQueue(launchQueue))
        let task = (operation.request.handlesCookies ? cookieSession : session).dataTask(with: request)
        task.setPriority(operation.priority)
        delegate.register(task, for: operation, settings: settings, restart: restart)
        operation.started(task: task)
        if let deadline { deadlines.watch(operation, until: deadline) }
        task.resume()
    }

    private static let uniqueKeys = Atomic<UInt64>(0)

    /// What callers must share to share a download. A request's own byte limit counts only when it
    /// is below the downloader's (otherwise the download is the same).
    private static func key(for request: ImageLoadRequest, config: DownloaderConfig) -> String {
        var key = request.url.absoluteString
        if request.requestModifier != nil || request.responseModifier != nil {
            key += "\u{0}unshared-\(uniqueKeys.add(1, ordering: .relaxed).newValue)"
        }
        if let validators = request.validators, !validators.isEmpty {
            key += "\u{0}\(validators.entityTag ?? "")\u{0}\(validators.lastModified ?? "")"
        }
        if request.handlesCookies { key += "\u{0}cookies" }
        if let limit = request.maxResponseBytes, limit < config.maxResponseBytes { key += "\u{0}max\(limit)" }
        if !request.headers.isEmpty {
            key += "\u{0}" + request.headers.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: "&")
        }
        return key
    }

    private static func makeURLRequest(for request: ImageLoadRequest, config: DownloaderConfig) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        let (seconds, attoseconds) = config.idleTimeout.components
        urlRequest.timeoutInterval = TimeInterval(max(1, seconds + (attoseconds > 0 ? 1 : 0)))
        urlRequest.httpShouldHandleCookies = request.handlesCookies
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        for (field, value) in config.httpHeaders { urlRequest.setValue(value, forHTTPHeaderField: field) }
        if let authorization = config.authorizationHeader {
            urlRequest.setValue(authorization, forHTTPHeaderField: "Authorization")
        }
        for (field, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: field) }
        if let validators = request.validators {
            if let tag = validators.entityTag { urlRequest.setValue(tag, forHTTPHeaderField: "If-None-Match") }
            if let date = validators.lastModified { urlRequest.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        }
        return urlRequest
    }
}
