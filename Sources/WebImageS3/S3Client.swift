import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import WebImage

/// A small S3 client: GET, HEAD, PUT, DELETE, list and create-bucket, over libcurl (WebImage's
/// `CurlExchange`, `http://` and `https://`; URLSession with ``S3ClientConfig/Transport/urlSession``), signed with
/// ``SignatureV4`` (or unsigned without credentials), each call bounded by
/// ``S3ClientConfig/timeout`` per attempt, time-outs, connection failures, cut bodies, 5xx, 429 and
/// `SlowDown` retried ``S3ClientConfig/retries`` times with exponential backoff and jitter, and a
/// breaker that skips a failing store for ``S3ClientConfig/breakerCooldown``.
///
/// `Sendable`: the session, the plain client and the breaker are thread-safe. Requests run on
/// URLSession's threads or the plain client's workers; the caller's task only awaits them (never
/// blocking a thread of the cooperative pool). A cancelled caller stops waiting at once: its
/// request is cancelled.
public final class S3Client: Sendable {
    /// The configuration it was made with.
    public let config: S3ClientConfig
    private let session: URLSession
    private let signer: SignatureV4?
    let breaker: CircuitBreaker

    /// An answer: status, lower-cased headers, body.
    public struct Response: Sendable {
        /// The HTTP status (200, 204, 304...).
        public var status: Int
        /// Header fields, names lower-cased.
        public var headers: [String: String]
        /// The body.
        public var body: Data
    }

    /// Creates a client; nothing is connected until the first call.
    public init(config: S3ClientConfig) {
        self.config = config
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = config.timeout.secondsValue
        configuration.timeoutIntervalForRequest = seconds
        configuration.timeoutIntervalForResource = seconds
        configuration.httpMaximumConnectionsPerHost = 16
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
        signer = config.credentials.map { SignatureV4(credentials: $0, region: config.region) }
        breaker = CircuitBreaker(threshold: config.breakerThreshold, cooldown: config.breakerCooldown)
    }

    /// Whether the breaker is open now (the store is being skipped).
    public var isSkippingStore: Bool { breaker.isOpen }

    /// GETs an object. 200, 206 and 304 are answers; any other status throws.
    /// - Parameter headers: extra request headers (`If-None-Match`, `If-Modified-Since`, `Range`).
    /// - Throws: ``S3Error``.
    public func get(bucket: String, key: String, headers: [String: String] = [:]) async throws(S3Error) -> Response {
        try await send("GET", url: config.url(bucket: bucket, key: key), headers: headers, body: nil, accepting: [200, 206, 304])
    }

    /// HEADs an object: whether it exists (200), with its headers.
    /// - Throws: ``S3Error`` (a 404 is `nil`, not an error).
    public func head(bucket: String, key: String) async throws(S3Error) -> [String: String]? {
        let response = try await send("HEAD", url: config.url(bucket: bucket, key: key), headers: [:], body: nil, accepting: [200, 404])
        return response.status == 200 ? response.headers : nil
    }

    /// PUTs an object with `metadata` as `x-amz-meta-*` headers.
    /// - Throws: ``S3Error``.
    public func put(bucket: String, key: String, body: Data, contentType: String? = nil, metadata: [String: String] = [:]) async throws(S3Error) {
        var headers: [String: String] = [:]
        if let contentType { headers["content-type"] = contentType }
        for (name, value) in metadata { headers["x-amz-meta-" + name.lowercased()] = value }
        _ = try await send("PUT", url: config.url(bucket: bucket, key: key), headers: headers, body: body, accepting: [200])
    }

    /// DELETEs an object (a missing one is not an error, as in S3).
    /// - Throws: ``S3Error``.
    public func delete(bucket: String, key: String) async throws(S3Error) {
        _ = try await send("DELETE", url: config.url(bucket: bucket, key: key), headers: [:], body: nil, accepting: [200, 204, 404])
    }

    /// Creates a bucket (an existing one of this owner is not an error).
    /// - Throws: ``S3Error``.
    public func createBucket(_ bucket: String) async throws(S3Error) {
        var body: Data?
        if config.region != "us-east-1" {
            body = Data("<CreateBucketConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><LocationConstraint>\(config.region)</LocationConstraint></CreateBucketConfiguration>".utf8)
        }
        do {
            _ = try await send("PUT", url: config.url(bucket: bucket, key: ""), headers: [:], body: body, accepting: [200])
        } catch .status(409, let code) where code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" {
            return
        }
    }

    /// One page of a ListObjectsV2 of `prefix`: the objects and the token of the next page.
    /// - Throws: ``S3Error``.
    public func list(bucket: String, prefix: String, continuationToken: String? = nil) async throws(S3Error) -> S3Listing {
        var query = [("list-type", "2"), ("prefix", prefix)]
        if let continuationToken { query.append(("continuation-token", continuationToken)) }
        let response = try await send("GET", url: config.url(bucket: bucket, key: "", query: query), headers: [:], body: nil, accepting: [200])
        return try S3Listing(xml: response.body)
    }

    /// Runs one request, bounded by ``S3ClientConfig/timeout`` whatever URLSession's own timers do
    /// (a timer of ours cancels the task), and cancelled with the calling task: see ``PendingCall``.
    private func perform(_ request: URLRequest) async throws(S3Error) -> (Data, URLResponse) {
        let call = PendingCall()
        let timeout = config.timeout
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<PendingCall.Outcome, Never>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let data, let response {
                        call.finish(.success((data, response)))
                    } else {
                        call.finish(.failure(.transport((error as? URLError).map { "\($0.code)" } ?? "no answer")))
                    }
                }
                let timer = Task {
                    try await Task.sleep(for: timeout)
                    call.finish(.failure(.transport("timedOut after \(timeout)")))
                }
                call.start(continuation, task: task, timer: timer)
                task.resume()
            }
        } onCancel: {
            call.finish(.failure(.transport("cancelled")))
        }
        return try result.get()
    }

    /// Sends one call with its retries, under the breaker.    /// Sends one call with its retries, under the breaker.
    private func send(_ method: String, url: URL, headers: [String: String], body: Data?, accepting: Set<Int>) async throws(S3Error) -> Response {
        guard breaker.decide() == .allow else { throw .unavailable }
        var attempt = 0
        while true {
            do {
                let response = try await attemptOnce(method, url: url, headers: headers, body: body, accepting: accepting)
                breaker.recordSuccess()
                return response
            } catch {
                if Task.isCancelled {
                    breaker.endProbe()
                    throw error
                }
                guard error.isRetryable, attempt < config.retries else {
                    if error.isRetryable { breaker.recordFailure() } else { breaker.recordSuccess() }   // a 403 or 404 is an answer
                    throw error
                }
                attempt += 1
                let base = config.retryBaseDelay * (1 << (attempt - 1))
                do { try await Task.sleep(for: base * Double.random(in: 0.5...1.5)) } catch {
                    breaker.endProbe()
                    throw .transport("cancelled")
                }
            }
        }
    }

    /// The largest answer body read (a listing or an object).
    static let maxBodyBytes = 512 << 20

    private func attemptOnce(_ method: String, url: URL, headers: [String: String], body: Data?, accepting: Set<Int>) async throws(S3Error) -> Response {
        var all = headers
        if let signer {
            let payloadHash = body.map { SignatureV4.hex(HMAC.digest([UInt8]($0))) } ?? SignatureV4.emptyPayloadHash
            all = signer.signed(method: method, url: url, headers: headers, payloadHash: payloadHash, date: Date())
        }
        let status: Int, fields: [String: String], data: Data
        if config.transport == .curl {
            let answer: CurlExchange.Response
            do {
                answer = try await CurlExchange.send(method, url: url, headers: all, body: body, timeout: config.timeout,
                                                     maxBodyBytes: Self.maxBodyBytes)
            } catch {
                switch error {
                case .transport(let reason): throw .transport(reason)
                case .cancelled: throw .transport("cancelled")
                case .truncated(let received, let expected): throw .truncated(received: received, expected: expected)
                case .tooLarge(let limit): throw .malformed("a body over \(limit) bytes")
                case .malformed(let reason): throw .malformed(reason)
                }
            }
            (status, fields, data) = (answer.status, answer.headers, answer.body)
        } else {
            var request = URLRequest(url: url)
            request.httpMethod = method
            for (name, value) in all { request.setValue(value, forHTTPHeaderField: name) }
            request.httpBody = body
            if body == nil && method == "PUT" { request.setValue("0", forHTTPHeaderField: "Content-Length") }
            let (received, response) = try await perform(request)
            guard let http = response as? HTTPURLResponse else { throw .transport("not an HTTP answer") }
            var headerFields: [String: String] = [:]
            for (name, value) in http.allHeaderFields { headerFields["\(name)".lowercased()] = "\(value)" }
            (status, fields, data) = (http.statusCode, headerFields, received)
            if let length = fields["content-length"].flatMap(Int.init), method != "HEAD", status != 304, data.count != length {
                throw .truncated(received: data.count, expected: length)
            }
        }
        guard accepting.contains(status) else { throw .status(status, code: S3Listing.errorCode(in: data)) }
        return Response(status: status, headers: fields, body: data)
    }
}

/// One request's meeting point: URLSession's completion (on its delegate queue), our timer and the
/// caller's cancellation each call ``finish(_:)``; the first wins, resumes the caller exactly once,
/// and cancels the URLSession task and the timer. Lock-based.
private final class PendingCall: Sendable {
    typealias Outcome = Result<(Data, URLResponse), S3Error>

    private struct State {
        var outcome: Outcome?
        var continuation: CheckedContinuation<Outcome, Never>?
        var task: URLSessionDataTask?
        var timer: Task<Void, any Error>?
    }

    // URLSessionDataTask and URLResponse are thread-safe Foundation classes; only this lock touches State.
    private let state = Mutex<State>(State())

    /// Hands over what to resume and cancel; resumes at once when the call already finished (a
    /// cancellation before the request was made).
    func start(_ continuation: CheckedContinuation<Outcome, Never>, task: URLSessionDataTask, timer: Task<Void, any Error>) {
        let finished = state.withLock { state -> Outcome? in
            if let outcome = state.outcome { return outcome }
            (state.continuation, state.task, state.timer) = (continuation, task, timer)
            return nil
        }
        if let finished {
            timer.cancel()
            task.cancel()
            continuation.resume(returning: finished)
        }
    }

    func finish(_ outcome: Outcome) {
        let taken = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, URLSessionDataTask?, Task<Void, any Error>?)? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { (state.continuation, state.task, state.timer) = (nil, nil, nil) }
            return (state.continuation, state.task, state.timer)
        }
        guard let (continuation, task, timer) = taken else { return }
        timer?.cancel()
        if case .failure = outcome { task?.cancel() }
        continuation?.resume(returning: outcome)
    }
}
