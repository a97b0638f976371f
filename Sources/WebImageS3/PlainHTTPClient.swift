import Foundation
import Synchronization
import WebImage

/// The object store's client for `http://` endpoints (MinIO, Ceph RGW, moto on a private network),
/// used by ``S3Client`` in place of URLSession there: one exchange of WebImage's ``HTTP1Client``
/// (a blocking call on a kept-alive socket, on a worker thread of its own, with no hand-off between
/// URLSession's threads and queues, which cost an S3 hit as much as the store's own answer, `bench
/// s3`). `https` endpoints keep URLSession (TLS). A cancelled caller is answered at once and its
/// socket shut down. Bodies are limited to ``maxBodyBytes``; a body cut short is
/// ``S3Error/truncated(received:expected:)``.
final class PlainHTTPClient: Sendable {
    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    static let maxBodyBytes = 512 << 20

    static let shared = PlainHTTPClient()

    /// Sends `method` to `url` with `headers` (no `Content-Length` or `Connection`: added by the
    /// client) and `body`, within `timeout`.
    func send(_ method: String, url: URL, headers: [String: String], body: Data?, timeout: Duration) async throws(S3Error) -> Response {
        guard let host = url.host, !host.isEmpty else { throw .transport("no host in \(url.absoluteString)") }
        let request = HTTP1Client.Request(method: method, url: url,
                                          headers: [("Host", SignatureV4.hostHeader(url))] + headers.map { ($0.key, $0.value) }, body: body)
        let deadline = ContinuousClock.now + timeout
        let cancellation = HTTP1Cancellation()
        let answer = Answer()
        let result: Result<Response, S3Error> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<Response, S3Error>, Never>) in
                answer.set(continuation)
                HTTP1Client.shared.run {
                    answer.finish(Self.perform(request, deadline: deadline, cancellation: cancellation))
                }
            }
        } onCancel: {
            cancellation.cancel()
            answer.finish(.failure(.transport("cancelled")))
        }
        return try result.get()
    }

    /// On a worker thread: the exchange, its body gathered.
    private static func perform(_ request: HTTP1Client.Request, deadline: ContinuousClock.Instant,
                                cancellation: HTTP1Cancellation) -> Result<Response, S3Error> {
        var response: Response?
        var expected: Int?
        var tooLarge = false
        let outcome = HTTP1Client.shared.exchange(request, deadline: deadline, cancellation: cancellation, onHead: { head in
            var headers: [String: String] = [:]
            for field in head.fields { headers[field.name.lowercased()] = field.value }
            response = Response(status: head.status, headers: headers, body: Data())
            if case .length(let length) = head.bodyFraming(forMethod: request.method) {
                guard length <= maxBodyBytes else { tooLarge = true; return false }
                expected = length
                response?.body.reserveCapacity(length)
            }
            return true
        }, onBody: { piece in
            if let base = piece.baseAddress { response?.body.append(base.assumingMemoryBound(to: UInt8.self), count: piece.count) }   // one memcpy
            guard (response?.body.count ?? 0) <= maxBodyBytes else { tooLarge = true; return false }
            return true
        })
        if tooLarge { return .failure(.malformed("a body over \(maxBodyBytes) bytes")) }
        switch outcome {
        case .success:
            guard let response else { return .failure(.transport("no answer")) }
            return .success(response)
        case .failure(.connectionLost) where response != nil && expected != nil:
            return .failure(.truncated(received: response?.body.count ?? 0, expected: expected ?? 0))
        case .failure(.malformed(let reason)):
            return .failure(.malformed(reason))
        case .failure(let error):
            return .failure(.transport(error.reason))
        }
    }
}

/// One call's answer, given once: by the worker, or at once by a cancellation. Lock-based.
private final class Answer: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>?
        var result: Result<PlainHTTPClient.Response, S3Error>?
        var answered = false
    }

    private let state = Mutex(State())

    func set(_ continuation: CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>) {
        let early = state.withLock { state -> Result<PlainHTTPClient.Response, S3Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    func finish(_ result: Result<PlainHTTPClient.Response, S3Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<PlainHTTPClient.Response, S3Error>, Never>? in
            guard !state.answered else { return nil }
            state.answered = true
            guard let continuation = state.continuation else {
                state.result = result
                return nil
            }
            state.continuation = nil
            return continuation
        }
        continuation?.resume(returning: result)
    }
}
