import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One network fetch, shared by every caller that asks for the same request while it is queued or
/// running.
///
/// Lock-based, not an actor: its state sits behind one `Mutex` so the session delegate (on
/// URLSession's serial delegate queue) can append bytes and report progress with no hop per chunk.
/// Who waits and the verdict are a ``SharedWork`` machine inside that state, so a caller's bytes,
/// its catch-up and the verdict are decided under the same lock; the `DownloadScheduler` books
/// slots under a lock of its own (taken before this one, never after). Progress handlers are only
/// ever called on the delegate queue, so they see chunks in order; a caller joining a download
/// under way is first sent everything received so far.
///
/// With a ``PartialDownloadStore``, it also resumes (``DownloadResumption`` has the rules): it asks
/// for the rest of a partial kept for its URL, continues it with a matching `206`, and when it fails
/// after receiving part of a body that can be resumed, it keeps those bytes, before any waiter hears
/// of the failure (so a retry finds them).
final class DownloadOperation: Sendable {
    typealias Continuation = CheckedContinuation<ImageLoadResponse, any Error>

    struct Waiter {
        var continuation: Continuation
        var progress: ImageLoadProgressHandler?
        var needsCatchUp: Bool
    }

    struct State {
        /// Who waits, and the verdict once there is one.
        var work = SharedWork<Waiter, ImageLoadResponse, WebImageError>()
        var priority: DownloadPriority
        /// The bytes received so far (only ever touched under the lock).
        var body = ReceivedBody()
        var expectedBytes: Int?
        var response: HTTPURLResponse?
        /// The status of the last response received, even one refused (for ``report``).
        var statusCode: Int?
        /// When the verdict came, and the body bytes received by then (for ``report``).
        var finishedAt: ContinuousClock.Instant?
        var receivedAtVerdict = 0
        /// The response's header fields, names lowercased (read once: each lookup through
        /// `HTTPURLResponse` searches and lowercases all of them again).
        var headers: [String: String] = [:]
        var task: (any DownloadTransportTask)?
        var enqueuedAt: ContinuousClock.Instant
        var startedAt: ContinuousClock.Instant?
        var respondedAt: ContinuousClock.Instant?
        var redirects = 0
        var resumption = DownloadResumption()
        /// Set when a response cannot continue the partial asked for, until the session delegate
        /// takes it and sends the request again without `Range`.
        var restartRequested = false
    }

    let key: String
    let request: ImageLoadRequest
    let sequence: UInt64
    let state: Mutex<State>
    /// Told once when the operation reaches its verdict (so the downloader frees its slot).
    let onFinish: @Sendable (DownloadOperation) -> Void
    /// Where partials of cut-short downloads are kept; `nil` for an operation that never resumes.
    let partials: PartialDownloadStore?

    init(key: String, request: ImageLoadRequest, sequence: UInt64, partials: PartialDownloadStore? = nil,
         onFinish: @escaping @Sendable (DownloadOperation) -> Void) {
        self.key = key
        self.request = request
        self.sequence = sequence
        self.partials = partials
        self.onFinish = onFinish
        state = Mutex(State(priority: request.priority, enqueuedAt: .now))
    }

    /// The largest body this download accepts: the downloader's limit, or the request's if smaller.
    func byteLimit(_ config: DownloaderConfig) -> Int {
        min(config.maxResponseBytes, request.maxResponseBytes ?? .max)
    }

    /// The key of this URL's partial in ``partials``.
    var partialKey: String { request.url.absoluteString }

    var url: URL { request.url }
    var priority: DownloadPriority { state.withLock { $0.priority } }
    var isFinished: Bool { state.withLock { $0.work.isFinished } }

    /// Raises the priority to `priority` if it is higher (a shared download runs at its most urgent waiter's).
    func raisePriority(to priority: DownloadPriority) {
        state.withLock { state in
            guard priority > state.priority else { return }
            state.priority = priority
            state.task?.setPriority(priority)
        }
    }

    // MARK: Waiters
    //
    // A caller is first *reserved* (under the scheduler's lock, when it finds or creates the
    // operation), then *added* with its continuation; ``SharedWork`` has the rules. When the last
    // caller leaves, the operation fails itself with a cancellation at once, under its lock, so a
    // caller the scheduler finds it for at that moment is refused (and starts a new operation).

    /// Reserves a place for caller `id`.
    /// - Returns: whether it has one: `false` once the operation has its verdict.
    @discardableResult
    func reserve(_ id: UInt64) -> Bool {
        state.withLock { $0.work.reserve(id) }
    }

    /// Registers reserved caller `id`. Resumes it at once if it left before getting here or if the
    /// download has already finished.
    func addWaiter(_ id: UInt64, continuation: Continuation, progress: ImageLoadProgressHandler?) {
        let action = state.withLock { state in
            state.work.attach(id, Waiter(continuation: continuation, progress: progress, needsCatchUp: !state.body.isEmpty))
        }
        if case .resume(let outcome) = action {
            // A caller attached after the download ended (it ran while the caller was being set
            // up) still gets its whole body as progress first, as a late joiner gets the bytes so far.
            if let progress, case .success(let response) = outcome, !response.data.isEmpty {
                progress(ImageLoadProgress(receivedBytes: response.data.count, expectedBytes: response.data.count, chunk: response.data))
            }
            continuation.resume(with: outcome.mapError { $0 as any Error })
        }
    }

    /// Removes a cancelled caller, resuming it with ``WebImageError/cancelled(url:)``; when nobody
    /// else wants the download it stops (and keeps its partial bytes, if it can resume).
    func removeWaiter(_ id: UInt64) {
        let cancellation = WebImageError.cancelled(url: url)
        let (action, conclusion) = state.withLock { state -> (SharedWork<Waiter, ImageLoadResponse, WebImageError>.LeaveAction, Conclusion?) in
            let action = state.work.leave(id, cancellation: cancellation)
            switch action {
            case .none, .resume: return (action, nil)
            case .resumeAndAbandon, .abandon: return (action, Self.conclude(&state, with: .failure(cancellation)))
            }
        }
        switch action {
        case .none: break
        case .resume(let waiter): waiter.continuation.resume(throwing: cancellation)
        case .resumeAndAbandon(let waiter): settle(conclusion!, outcome: .failure(cancellation), waiters: [waiter])
        case .abandon: settle(conclusion!, outcome: .failure(cancellation))
        }
    }

    /// What ``WebImageEvent/downloadFinished(_:)`` says of this fetch (once it has its verdict).
    var report: DownloadReport {
        state.withLock { state in
            var metrics = DownloadMetrics()
            var error: WebImageError?
            switch state.work.outcome {
            case .success(let response): metrics = response.metrics
            case .failure(let failure): error = failure
            case nil: break
            }
            if error != nil {
                metrics.receivedBytes = state.receivedAtVerdict
                metrics.redirectCount = state.redirects
                if let startedAt = state.startedAt {
                    metrics.queuedDuration = startedAt - state.enqueuedAt
                    metrics.timeToResponse = (state.respondedAt ?? state.finishedAt ?? .now) - startedAt
                    metrics.transferDuration = (state.finishedAt ?? .now) - startedAt
                }
            }
            return DownloadReport(url: url, statusCode: state.statusCode, receivedBytes: metrics.receivedBytes,
                                  metrics: metrics, error: error)
        }
    }

    /// The callers waiting or about to.
    var callerCount: Int { state.withLock { $0.work.callerCount } }

    /// Whether any caller waits or is about to.
    var isWanted: Bool { state.withLock { $0.work.isWanted } }

    // MARK: Transfer (called on the session's delegate queue)

    /// Records the network task; the scheduler watches the total deadline. (A request sent again
    /// without `Range` keeps the first start time.)
    func started(task: any DownloadTransportTask) {
        state.withLock { state in
            state.task = task
            if state.startedAt == nil { state.startedAt = .now }
        }
    }

    /// Decides, on the request about to be sent (modifiers applied), whether this download takes
    /// part in resuming, and if a partial is kept for its URL, takes it and asks for the rest of it.
    /// - Returns: whether `request` now asks for the rest of a partial.
    func prepareResumption(of request: inout URLRequest) -> Bool {
        guard let partials, partials.limit > 0, DownloadResumption.mayTakePart(request),
              self.request.validators?.isEmpty ?? true
        else { return false }
        let partial = partials.take(partialKey)
        if let partial { DownloadResumption.askForRest(of: partial, in: &request) }
        state.withLock { $0.resumption = DownloadResumption(continuing: partial) }
        return partial != nil
    }

    /// Records the redirects the transport followed by itself (libcurl), for the metrics.
    func noteRedirects(_ count: Int) {
        state.withLock { $0.redirects = max($0.redirects, count) }
    }

    /// Whether a response asked for the request to be sent again without `Range` (cleared by asking).
    func takeRestartRequest() -> Bool {
        state.withLock { state in
            defer { state.restartRequested = false }
            return state.restartRequested
        }
    }

    /// Answers URLSession's redirect question: `request` while within `maxRedirects`, `nil` past it
    /// (the redirect response itself then ends the transfer) — or not at all once the operation has
    /// finished. FoundationNetworking traps ("Received callback for HTTP redirection, but we're not
    /// waiting for it") when the answer reaches a task that was cancelled after asking; found under
    /// ThreadSanitizer on a loaded machine, a time-out during a redirect loop. The answer is given under
    /// the same lock that decides the verdict, and ``finish(with:)`` cancels the task only after that
    /// lock: either the answer is queued to the task before the cancel, or the task is never answered
    /// and its cancel ends it.
    func answerRedirect(maxRedirects: Int, request: URLRequest, _ answer: (URLRequest?) -> Void) {
        state.withLock { state in
            guard !state.work.isFinished else { return }
            state.redirects += 1
            answer(state.redirects <= maxRedirects ? request : nil)
        }
    }

    /// Checks the response headers; returns false (after failing the operation) to stop the transfer,
    /// or false without failing when the response cannot continue the partial the request asked for:
    /// then ``takeRestartRequest()`` is true and the request is to be sent again without `Range`.
    func received(_ response: URLResponse, config: DownloaderConfig) -> Bool {
        guard var http = response as? HTTPURLResponse else {
            fail(.transport(URLError(.badServerResponse), url: url))
            return false
        }
        for modifier in [config.responseModifier, request.responseModifier] {
            guard let modifier else { continue }
            guard let modified = modifier(http) else {
                fail(.rejected(url: url, reason: "the response modifier refused HTTP \(http.statusCode)"))
                return false
            }
            http = modified
        }
        let headers = Self.lowercasedHeaderFields(of: http)
        let (redirects, verdict) = state.withLock { state in
            state.statusCode = http.statusCode
            let verdict = state.resumption.evaluate(statusCode: http.statusCode, headers: headers)
            if verdict == .restart {
                state.restartRequested = true
                state.task = nil   // the delegate cancels it; its last callbacks are not this download's
            }
            return (state.redirects, verdict)
        }
        switch verdict {
        case .fromStart: break
        case .restart: return false
        case .continues(let prefix, let total, let merged): return continueBody(http, prefix: prefix, total: total, headers: merged, config: config)
        }
        if http.statusCode == 304 && request.validators.map({ !$0.isEmpty }) == true {
            fail(.notModified(url: url))
            return false
        }
        if (300..<400).contains(http.statusCode) && redirects > config.maxRedirects {
            fail(.tooManyRedirects(url: url))
            return false
        }
        guard config.acceptableStatusCodes.contains(http.statusCode) else {
            let retryAfter = headers["retry-after"].flatMap { RetryAfter.duration(from: $0) }
            fail(.badStatusCode(http.statusCode, url: url, retryAfter: retryAfter))
            return false
        }
        let contentType = headers["content-type"]
        guard config.accepts(contentType: contentType) else {
            fail(.unacceptableContentType(contentType, url: url))
            return false
        }
        let expected = http.expectedContentLength >= 0 ? Int(http.expectedContentLength) : nil
        if let expected, expected > byteLimit(config) {
            fail(.responseTooLarge(limit: byteLimit(config), url: url))
            return false
        }
        // With a content coding (gzip, br...) URLSession hands over decoded bytes, while Content-Length
        // counts the encoded ones: it then says nothing about how many bytes will arrive.
        let encoding = headers["content-encoding"]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let decodedLength = encoding.isEmpty || encoding == "identity" ? expected : nil
        state.withLock { state in
            state.response = http
            state.headers = headers
            state.respondedAt = .now
            state.expectedBytes = decodedLength
            if let decodedLength { state.body.reserve(decodedLength) }
        }
        return true
    }

    /// Accepts a `206` that continues a kept partial: the body starts as the partial's bytes, and
    /// every waiter's next progress report carries them (progress counts from the whole body).
    private func continueBody(_ http: HTTPURLResponse, prefix: Data, total: Int, headers: [String: String],
                              config: DownloaderConfig) -> Bool {
        let contentType = headers["content-type"]
        guard config.accepts(contentType: contentType) else {
            fail(.unacceptableContentType(contentType, url: url))
            return false
        }
        guard total <= byteLimit(config) else {
            fail(.responseTooLarge(limit: byteLimit(config), url: url))
            return false
        }
        state.withLock { state in
            state.response = http
            state.headers = headers
            state.respondedAt = .now
            state.expectedBytes = total
            state.body.reserve(total)
            state.body.replace(with: prefix)
            state.work.updateWaiters { _, waiter in waiter.needsCatchUp = true }
        }
        return true
    }

    /// Appends a chunk and reports it; returns false (after failing) when the size limit is passed.
    func received(_ chunk: Data, maxBytes: Int) -> Bool {
        chunk.withUnsafeBytes { accept(copying: $0, maxBytes: maxBytes, piece: chunk) }
    }

    /// Appends the bytes of a chunk that lies in a transport's buffer (valid only during the call) and
    /// reports it; returns false (after failing) when the size limit is passed. The bytes are copied
    /// once, into the body; a `Data` of the chunk is made only for waiters with a progress handler.
    func received(_ chunk: UnsafeRawBufferPointer, maxBytes: Int) -> Bool {
        accept(copying: chunk, maxBytes: maxBytes, piece: nil)
    }

    /// Receives body bytes straight into the body, with no copy of the transport's own: `write` is
    /// called (once, under the operation's lock: it must not wait, a non-blocking `recv(2)` at most)
    /// with room for up to `limit` bytes and returns how many it wrote there (0 when none were
    /// ready). Those are reported as a chunk would be.
    /// - Returns: true to go on; false (after failing) when the size limit is passed; `nil` when the
    ///   operation has already finished and `write` was not called (the transport reads the rest
    ///   through ``received(_:maxBytes:)-(UnsafeRawBufferPointer,_)``, which drops it).
    func receive(upTo limit: Int, maxBytes: Int, write: (UnsafeMutableRawBufferPointer) -> Int) -> Bool? {
        accept(upTo: limit, maxBytes: maxBytes, write: write)
    }

    /// ``accept(upTo:maxBytes:piece:whole:write:)`` copying `bytes`, which all join the body or, past
    /// the size limit, none do; a finished operation drops them (true: the transport goes on).
    private func accept(copying bytes: UnsafeRawBufferPointer, maxBytes: Int, piece: Data?) -> Bool {
        accept(upTo: bytes.count, maxBytes: maxBytes, piece: piece, whole: true) { room in
            room.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<room.count]))
            return room.count
        } ?? true
    }

    /// The one way bytes join the body: `write` fills room for up to `limit` of them, and every
    /// waiter with a progress handler is told (`piece`, if given, is the chunk as a `Data` already).
    /// The room never goes past the size limit: when `limit` would, the room is what is left under
    /// it, or (`whole`, a chunk that is all or nothing) nothing is written and the operation fails.
    /// True to go on, false (after failing) past the limit, `nil` once finished (nothing written).
    private func accept(upTo limit: Int, maxBytes: Int, piece: Data? = nil, whole: Bool = false,
                        write: (UnsafeMutableRawBufferPointer) -> Int) -> Bool? {
        // Each waiter with a progress handler: what it is told, and the whole body so far when it
        // has yet to catch up (else this chunk, made into a `Data` once, under the lock: after it the
        // body's memory may be handed over).
        var deliveries: [(handler: ImageLoadProgressHandler, received: Int, expected: Int?, data: Data)] = []
        let verdict: Bool? = state.withLock { state in
            guard !state.work.isFinished else { return nil }
            let start = state.body.count, left = max(0, maxBytes - start)
            guard limit <= left || (!whole && left > 0) else { return false }
            let written = state.body.append(upTo: min(limit, left), write)
            guard written > 0 else { return true }
            let received = state.body.count, expected = state.expectedBytes
            var chunk = piece
            let body = state.body
            state.work.updateWaiters { _, waiter in
                guard let handler = waiter.progress else { return }
                let data: Data
                if waiter.needsCatchUp {
                    data = body.copy()
                } else {
                    let made = chunk ?? body.withUnsafeBytes { Data(bytes: $0.baseAddress! + start, count: written) }
                    chunk = made
                    data = made
                }
                deliveries.append((handler, received, expected, data))
                waiter.needsCatchUp = false
            }
            return true
        }
        guard verdict != false else {
            fail(.responseTooLarge(limit: maxBytes, url: url))
            return false
        }
        for delivery in deliveries {
            delivery.handler(ImageLoadProgress(receivedBytes: delivery.received, expectedBytes: delivery.expected, chunk: delivery.data))
        }
        return verdict
    }

    /// The header fields of `response`, names lowercased.
    static func lowercasedHeaderFields(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return headers
    }

    /// Ends the transfer with the session's verdict and resumes every waiter.
    func completed(error: (any Error)?, config: DownloaderConfig) {
        let outcome: Result<ImageLoadResponse, WebImageError> = state.withLock { state in
            if let outcome = state.work.outcome { return outcome }
            let finishedAt = ContinuousClock.now
            if let error {
                let urlError = error as? URLError ?? URLError(.unknown)
                let received = state.body.count
                if let expected = state.expectedBytes, received < expected, urlError.code != .timedOut, urlError.code != .cancelled {
                    return .failure(.truncatedResponse(received: received, expected: expected, url: url))
                }
                let failure: WebImageError = switch urlError.code {
                case .timedOut: .timedOut(url: url)
                case .cancelled: .cancelled(url: url)
                default: .transport(urlError, url: url)
                }
                return .failure(failure)
            }
            guard let response = state.response else { return .failure(.transport(URLError(.badServerResponse), url: url)) }
            if let expected = state.expectedBytes, state.body.count < expected {
                return .failure(.truncatedResponse(received: state.body.count, expected: expected, url: url))
            }
            if state.body.isEmpty { return .failure(.emptyResponse(url: url)) }
            var metrics = DownloadMetrics()
            if let startedAt = state.startedAt {
                metrics.queuedDuration = startedAt - state.enqueuedAt
                metrics.timeToResponse = (state.respondedAt ?? finishedAt) - startedAt
                metrics.transferDuration = finishedAt - startedAt
            }
            metrics.receivedBytes = state.body.count
            metrics.resumedBytes = state.resumption.resumedBytes
            metrics.redirectCount = state.redirects
            // A continued body is the whole representation, as a 200 would have sent it.
            let statusCode = state.resumption.resumedBytes > 0 ? 200 : response.statusCode
            return .success(ImageLoadResponse(
                data: state.body.take(), url: response.url ?? url, statusCode: statusCode,
                contentType: state.headers["content-type"], headers: state.headers, metrics: metrics))
        }
        var final = outcome
        if case .success(var response) = outcome, let transformer = config.dataTransformer {
            if let transformed = transformer(response.data, response) {
                response.data = transformed
                final = .success(response)
            } else {
                final = .failure(.rejected(url: url, reason: "the data transformer refused the body"))
            }
        }
        finish(with: final)
    }

    /// Fails the operation (time-out, limit, cancellation) and stops its transfer. Later failures
    /// and completions are ignored: the first verdict wins.
    func fail(_ error: WebImageError) {
        finish(with: .failure(error))
    }

    /// What is left to do, after the lock, once the operation has its verdict.
    private struct Conclusion {
        var task: (any DownloadTransportTask)?
        var leftover: PartialDownload?
        var succeeded: Bool
    }

    /// Takes what the verdict leaves to do (under the lock, once the machine has the verdict).
    private static func conclude(_ state: inout State, with result: Result<ImageLoadResponse, WebImageError>) -> Conclusion {
        var leftover: PartialDownload?
        if case .failure(let error) = result { leftover = state.resumption.leftover(body: state.body.copy(), error: error) }
        state.finishedAt = .now
        state.receivedAtVerdict = state.body.count
        state.body = ReceivedBody()   // a successful response took the bytes already
        // The task goes with the conclusion: a task that holds its operation (`CurlDownloadTask`)
        // would otherwise keep it, and the outcome's bytes, alive for good.
        let task = state.task
        state.task = nil
        return Conclusion(task: task, leftover: leftover, succeeded: state.resumption.isEligible && (try? result.get()) != nil)
    }

    private func finish(with result: Result<ImageLoadResponse, WebImageError>) {
        let taken = state.withLock { state -> (waiters: [Waiter], conclusion: Conclusion)? in
            guard case .resume(let waiters) = state.work.finish(result) else { return nil }   // the first verdict wins
            return (waiters, Self.conclude(&state, with: result))
        }
        guard let taken else { return }
        settle(taken.conclusion, outcome: result, waiters: taken.waiters)
    }

    /// Stops the transfer of a failed operation, keeps or drops its URL's partial, frees the
    /// scheduler's slot, and resumes the waiters.
    private func settle(_ conclusion: Conclusion, outcome: Result<ImageLoadResponse, WebImageError>, waiters: [Waiter] = []) {
        if case .failure = outcome { conclusion.task?.cancel() }
        // Before any waiter hears the verdict, so that a retry it makes finds (or no longer finds) the bytes.
        if let leftover = conclusion.leftover {
            partials?.keep(leftover, forKey: partialKey)
        } else if conclusion.succeeded {
            partials?.remove(partialKey)
        }
        // The slot is freed and the fetch reported before any waiter hears the verdict, so a caller
        // that returns has its download's report already.
        onFinish(self)
        for waiter in waiters {
            // A caller that joined after the last chunk (its catch-up waits for a next one that never
            // came) gets the whole body as progress first, as one that joins after the end does.
            if waiter.needsCatchUp, let progress = waiter.progress, case .success(let response) = outcome, !response.data.isEmpty {
                progress(ImageLoadProgress(receivedBytes: response.data.count, expectedBytes: response.data.count, chunk: response.data))
            }
            waiter.continuation.resume(with: outcome.mapError { $0 as any Error })
        }
    }
}
