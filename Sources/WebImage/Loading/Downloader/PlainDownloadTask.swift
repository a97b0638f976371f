import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download's transfer over ``HTTP1Client`` (an `http://` source), doing for its
/// ``DownloadOperation`` what URLSession and ``SessionDelegate`` do for an `https://` one: the
/// response through ``TransferRouting/verdict(for:operation:config:restart:)``, each piece of the
/// body to the operation as it arrives (progress, the size limit; received straight into the
/// operation's body, with no copy of the client's own), redirects through
/// ``TransferRouting/answerRedirect(to:operation:config:_:)`` (checked and counted the same way),
/// and the end as a `URLError` the operation maps like URLSession's.
///
/// It runs on the client's worker thread, blocking there: a stalled server holds that one thread
/// (the client starts another for the next download) until the idle time-out
/// (``DownloaderConfig/idleTimeout``, between two reads) or the download's deadline, which cancels
/// the operation and so this task (its socket is shut down).
///
/// What it leaves to URLSession, by sending the request there instead (``handOver``): a redirect to
/// `https://`, and an answer with a content coding (it asks for none, as `Accept-Encoding` is not
/// sent, but a server may send `gzip` anyway; URLSession decodes it). The origin then sees the
/// request twice.
///
/// Redirects: `301`, `302`, `303`, `307` and `308` with a `Location` are followed (GET stays GET);
/// to another host, `Authorization` and `Cookie` are not sent on.
final class PlainDownloadTask: DownloadTransportTask {
    private let operation: DownloadOperation
    private let config: DownloaderConfig
    private let restart: (@Sendable () -> Void)?
    /// Sends a request with URLSession for the rest of this download.
    private let handOver: @Sendable (URLRequest) -> Void
    private let cancellation = HTTP1Cancellation()
    /// Set once the task has nothing more to tell the operation (it completed, restarted or handed over).
    private let isDetached = Atomic<Bool>(false)

    init(operation: DownloadOperation, config: DownloaderConfig, restart: (@Sendable () -> Void)?,
         handOver: @escaping @Sendable (URLRequest) -> Void) {
        self.operation = operation
        self.config = config
        self.restart = restart
        self.handOver = handOver
    }

    /// Whether ``PlainDownloadTask`` can carry `request` (plain HTTP, not HTTPS).
    static func carries(_ request: URLRequest) -> Bool {
        request.url?.scheme?.lowercased() == "http" && request.url?.host?.isEmpty == false
    }

    /// Starts the transfer on a worker thread.
    func resume(_ request: URLRequest) {
        HTTP1Client.shared.run { [self] in perform(request) }
    }

    func cancel() {
        cancellation.cancel()
    }

    func setPriority(_ priority: DownloadPriority) {}

    /// What the head of an answer asked for.
    private enum Next {
        case body
        case stop
        case restart(@Sendable () -> Void)
        case handOver
        case redirect(URLRequest, HTTPURLResponse)
    }

    /// Carries the transfer on the calling thread, which must be one of ``HTTP1Client``'s workers
    /// (it blocks there until the answer is read, handed over or cut).
    func perform(_ request: URLRequest) {
        guard let url = request.url else { return complete(URLError(.badURL)) }
        var next = Next.stop
        let exchange = HTTP1Client.Request(method: request.httpMethod ?? "GET", url: url, headers: Self.fields(of: request))
        let outcome = HTTP1Client.shared.exchange(
            exchange, deadline: .now + config.downloadTimeout + .seconds(5), readTimeout: config.idleTimeout,
            addressPolicy: config.sourceAddressPolicy, cancellation: cancellation,
            bodyRoom: { [operation, config] limit, write in
                // Straight into the operation's body: no copy through the reader's buffer.
                let going = operation.receive(upTo: limit, maxBytes: operation.byteLimit(config), write: write)
                if going == false { next = .stop }
                return going
            },
            onHead: { head in
                next = route(head, for: request, url: url)
                if case .body = next { return true }
                return false
            },
            onBody: { [operation, config] piece in
                guard operation.received(piece, maxBytes: operation.byteLimit(config)) else {
                    next = .stop
                    return false
                }
                return true
            })
        switch next {
        case .restart(let again):
            guard detach() else { return }
            again()
        case .handOver:
            guard detach() else { return }
            handOver(request)
        case .redirect(let target, let response):
            TransferRouting.answerRedirect(to: target, operation: operation, config: config) { [self] approved in
                // Called under the operation's lock: everything that follows goes back to a worker.
                HTTP1Client.shared.run { [self] in
                    guard let approved else { return finishWithRedirect(response) }   // past the limit: the 3xx ends it
                    if Self.carries(approved) {
                        perform(approved)
                    } else if detach() {
                        handOver(approved)
                    }
                }
            }
        case .body, .stop:
            switch outcome {
            case .success: complete(nil)
            case .failure(.addressRefused(let address, let reason)):
                guard detach() else { return }
                operation.fail(.sourceRefused(address: address, reason: reason, url: operation.url))
            case .failure(let error): complete(Self.urlError(for: error))
            }
        }
    }

    /// Decides what an answer's head leads to, handing a final response to the operation.
    private func route(_ head: HTTP1Head, for request: URLRequest, url: URL) -> Next {
        var fields: [String: String] = [:]
        for field in head.fields {
            fields[field.name] = fields[field.name].map { $0 + ", " + field.value } ?? field.value
        }
        guard let response = HTTPURLResponse(url: url, statusCode: head.status, httpVersion: head.version, headerFields: fields) else {
            return .stop
        }
        if [301, 302, 303, 307, 308].contains(head.status), let location = head.value(of: "Location"),
           let target = URL(string: location, relativeTo: url)?.absoluteURL {
            return .redirect(Self.redirected(request, to: target), response)
        }
        let coding = head.value(of: "Content-Encoding")?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        if !coding.isEmpty && coding != "identity" { return .handOver }
        switch TransferRouting.verdict(for: response, operation: operation, config: config, restart: restart) {
        case .proceed: return .body
        case .stop: return .stop
        case .restart(let again): return .restart(again)
        }
    }

    /// The 3xx past the redirect limit, as the final response (the operation fails it).
    private func finishWithRedirect(_ response: HTTPURLResponse) {
        if case .restart(let again) = TransferRouting.verdict(for: response, operation: operation, config: config, restart: restart) {
            guard detach() else { return }
            return again()
        }
        complete(nil)
    }

    private func complete(_ error: URLError?) {
        guard detach() else { return }
        operation.completed(error: error, config: config)
    }

    /// Marks the task done; false when it was already.
    private func detach() -> Bool {
        !isDetached.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// The request's header fields, as URLSession would send them (`Accept` if none is set).
    private static func fields(of request: URLRequest) -> [(name: String, value: String)] {
        var fields = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        if !fields.contains(where: { $0.name.caseInsensitiveCompare("Accept") == .orderedSame }) { fields.append(("Accept", "*/*")) }
        return fields
    }

    /// `request` sent on to `target`: the same fields, without credentials when the host changes.
    private static func redirected(_ request: URLRequest, to target: URL) -> URLRequest {
        var next = request
        next.url = target
        next.httpMethod = "GET"
        if target.host?.lowercased() != request.url?.host?.lowercased() || target.port != request.url?.port {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
            next.setValue(nil, forHTTPHeaderField: "Cookie")
        }
        return next
    }

    /// The `URLError` URLSession reports for the same failure.
    static func urlError(for error: HTTP1Error) -> URLError {
        switch error {
        case .cannotFindHost: URLError(.cannotFindHost)
        case .cannotConnect: URLError(.cannotConnectToHost)
        case .timedOut: URLError(.timedOut)
        case .connectionLost: URLError(.networkConnectionLost)
        case .malformed: URLError(.badServerResponse)
        case .cancelled: URLError(.cancelled)
        case .addressRefused: URLError(.cannotConnectToHost)
        }
    }
}
