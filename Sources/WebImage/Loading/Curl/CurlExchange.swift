import Foundation
import Synchronization

/// One whole request and answer over ``CurlEngine``, for callers that want the body at once (the
/// object store's client, `WebImageS3`): `http://` and `https://`, HTTP/2 where offered, no redirects
/// followed, no content coding asked for or decoded.
///
/// A cancelled caller is answered at once (``CurlExchangeError/cancelled``) and its transfer
/// stopped; the answer's body is limited (``CurlExchangeError/tooLarge(limit:)``); a body cut short
/// of its `Content-Length` is ``CurlExchangeError/truncated(received:expected:)``.
package enum CurlExchange {
    /// An answer: its status, header fields (names lowercased; repeated ones joined by ", ") and body.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [String: String]
        package var body: Data
    }

    /// Sends `method` to `url` with `headers` and `body` and returns the whole answer.
    /// - Parameters:
    ///   - timeout: the whole exchange's limit (libcurl's own time-out).
    ///   - maxBodyBytes: the largest body accepted, declared or received.
    ///   - certificateAuthorityFile: a PEM file trusted instead of the system's store; default `nil`.
    /// - Throws: ``CurlExchangeError``.
    package static func send(_ method: String, url: URL, headers: [String: String], body: Data?, timeout: Duration,
                             maxBodyBytes: Int, certificateAuthorityFile: String? = nil) async throws(CurlExchangeError) -> Response {
        var fields = headers.map { (name: $0.key, value: $0.value) }
        fields.append(("Expect", ""))
        fields.append(("Accept-Encoding", ""))
        if method == "PUT" || method == "POST", !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
            fields.append(("Content-Type", ""))   // libcurl would say a form is posted
        }
        let request = CurlRequest(url: url, method: method, headers: fields, body: body, totalTimeout: timeout,
                                  certificateAuthorityFile: certificateAuthorityFile, bufferSize: 64 << 10)
        let collector = Collector(method: method, maxBodyBytes: maxBodyBytes)
        let transfer = CurlTransfer(request, delegate: collector)
        let result: Result<Response, CurlExchangeError> = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                collector.set(continuation)
                transfer.start()
            }
        } onCancel: {
            transfer.cancel()
            collector.finish(.failure(.cancelled))
        }
        return try result.get()
    }
}

/// Why an exchange failed.
package enum CurlExchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    package var description: String {
        switch self {
        case .transport(let reason): reason
        case .truncated(let received, let expected): "the answer was cut short (\(received) of \(expected) bytes)"
        case .tooLarge(let limit): "the answer is larger than \(limit) bytes"
        case .malformed(let reason): "the answer is not HTTP: \(reason)"
        case .cancelled: "cancelled"
        }
    }

    /// No answer: the connection or the transfer failed (libcurl's text), or it timed out.
    case transport(String)
    /// The body ended before its `Content-Length`.
    case truncated(received: Int, expected: Int)
    /// The body passed the limit.
    case tooLarge(limit: Int)
    /// The answer was not HTTP, or its heads passed their limit.
    case malformed(String)
    /// The caller's task was cancelled.
    case cancelled
}

/// Gathers one exchange's answer on the engine's thread and resumes its caller once (or the
/// caller's cancellation does first). Lock-based: the engine's thread and the caller's meet here.
private final class Collector: CurlTransferDelegate {
    typealias Outcome = Result<CurlExchange.Response, CurlExchangeError>

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
        var response: CurlExchange.Response?
        var expected: Int?
        var tooLarge = false
    }

    private let method: String
    private let maxBodyBytes: Int
    private let state = Mutex(State())

    init(method: String, maxBodyBytes: Int) {
        self.method = method
        self.maxBodyBytes = maxBodyBytes
    }

    func set(_ continuation: CheckedContinuation<Outcome, Never>) {
        let early = state.withLock { state -> Outcome? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }

    func transferReceivedHead(_ head: CurlHead) -> Bool {
        var headers: [String: String] = [:]
        for (name, value) in head.joinedFields { headers[name.lowercased()] = value }
        let declared = method == "HEAD" || head.status == 304 || head.status == 204 ? nil : headers["content-length"].flatMap(Int.init)
        if let declared, declared > maxBodyBytes {
            finish(.failure(.tooLarge(limit: maxBodyBytes)))
            return false
        }
        state.withLock { state in
            state.response = CurlExchange.Response(status: head.status, headers: headers, body: Data(capacity: declared ?? 0))
            state.expected = declared
        }
        return true
    }

    func transferReceived(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let fits = state.withLock { state -> Bool in
            guard (state.response?.body.count ?? 0) + bytes.count <= maxBodyBytes else { return false }
            state.response?.body.append(contentsOf: bytes)
            return true
        }
        if !fits { finish(.failure(.tooLarge(limit: maxBodyBytes))) }
        return fits
    }

    func transferAllows(_ address: IPAddress, for url: URL) -> Bool { true }

    func transferCompleted(_ outcome: CurlOutcome) {
        let (response, expected) = state.withLock { ($0.response, $0.expected) }
        switch outcome {
        case .completed:
            guard let response else { return finish(.failure(.malformed("no answer"))) }
            finish(.success(response))
        case .headTooLarge:
            finish(.failure(.malformed("the answer's heads passed \(CurlTransfer.maxHeadBytes) bytes")))
        case .malformedHead(let line):
            finish(.failure(.malformed("not an HTTP status line: \(line.prefix(80))")))
        case .failed(let code, let message):
            if let response, let expected, response.body.count < expected,
               CurlResultCode.urlError(for: code).code == .networkConnectionLost {
                return finish(.failure(.truncated(received: response.body.count, expected: expected)))
            }
            if code == CurlResultCode.timedOut { return finish(.failure(.transport("timed out: \(message)"))) }
            finish(.failure(.transport(message)))
        }
    }
}
