import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download's transfer over libcurl (``CurlEngine``), doing for its ``DownloadOperation`` what
/// URLSession and ``SessionDelegate`` do on the other transport: the final head through
/// ``TransferRouting/verdict(for:operation:config:restart:)``, each piece of the body to the
/// operation as it arrives (progress and the size limit, counted on the bytes received, decoded
/// when the origin sent a content coding), and the end mapped to the operation's verdict.
///
/// On libcurl's own mechanisms: redirects are followed by libcurl (at most
/// ``DownloaderConfig/maxRedirects``, to `http` and `https` only; `Authorization` and `Cookie`
/// fields are not sent to another host); every address of every hop is put to
/// ``DownloaderConfig/sourceAddressPolicy`` in libcurl's open-socket callback, just before the
/// connection is made (a name whose answers change between lookups cannot steer around it); the
/// connect and stalled-transfer time-outs are libcurl's (the whole-download deadline is the
/// scheduler's, ``DownloadDeadlines``, with libcurl's total time-out five seconds behind as a
/// backstop). Its callbacks run on the engine's thread and never block.
final class CurlDownloadTask: DownloadTransportTask, CurlTransferDelegate {
    private let operation: DownloadOperation
    private let config: DownloaderConfig
    private let restart: (@Sendable () -> Void)?
    private let policy: SourceAddressPolicy
    /// The first address refused at connection time, and the URL it was for (written and read on
    /// the engine's thread).
    private let refused = Mutex<(address: IPAddress, reason: String, url: URL)?>(nil)
    /// Set once the task has nothing more to tell the operation (it completed or restarted).
    private let isDetached = Atomic<Bool>(false)
    private let transfer = Mutex<CurlTransfer?>(nil)

    init(operation: DownloadOperation, config: DownloaderConfig, restart: (@Sendable () -> Void)?) {
        self.operation = operation
        self.config = config
        self.restart = restart
        self.policy = config.sourceAddressPolicy
    }

    /// Whether the libcurl transport carries `request` (`http` or `https` with a host).
    static func carries(_ request: URLRequest) -> Bool {
        let scheme = request.url?.scheme?.lowercased()
        return (scheme == "http" || scheme == "https") && request.url?.host?.isEmpty == false
    }

    /// Hands the transfer to the engine.
    func resume(_ request: URLRequest) {
        guard let url = request.url else { return complete(URLError(.badURL)) }
        let proxy = config.proxy.proxy(for: url)
        var fields = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        if !fields.contains(where: { $0.name.caseInsensitiveCompare("Accept") == .orderedSame }) { fields.append(("Accept", "*/*")) }
        if !fields.contains(where: { $0.name.caseInsensitiveCompare("Accept-Encoding") == .orderedSame }) {
            fields.append(("Accept-Encoding", ""))   // libcurl decodes a coding sent anyway, but asks for none
        }
        fields.append(("Expect", ""))
        let curlRequest = CurlRequest(
            url: url, method: request.httpMethod ?? "GET", headers: fields, body: nil,
            maxRedirects: max(0, config.maxRedirects), connectTimeout: config.connectTimeout,
            totalTimeout: config.downloadTimeout + .seconds(5), stallTimeout: config.idleTimeout,
            decodesContent: true, checksAddresses: policy != .unrestricted && proxy == nil,
            certificateAuthorityFile: config.certificateAuthorityFile,
            certificateAuthorityDirectory: config.certificateAuthorityDirectory, proxy: proxy)
        let made = CurlTransfer(curlRequest, delegate: self)
        transfer.withLock { $0 = made }
        made.start()
    }

    func cancel() {
        guard let running = transfer.withLock({ transfer in defer { transfer = nil }; return transfer }) else { return }
        running.cancel()
    }

    func setPriority(_ priority: DownloadPriority) {}

    // MARK: CurlTransferDelegate (on the engine's thread)

    func transferReceivedHead(_ head: CurlHead) -> Bool {
        guard !isDetached.load(ordering: .acquiring) else { return false }
        guard let response = HTTPURLResponse(url: head.url, statusCode: head.status, httpVersion: head.version,
                                             headerFields: head.joinedFields)
        else {
            complete(URLError(.badServerResponse))
            return false
        }
        operation.noteRedirects(head.redirectCount)
        switch TransferRouting.verdict(for: response, operation: operation, config: config, restart: restart) {
        case .proceed:
            return true
        case .stop:
            _ = detach()
            return false
        case .restart(let again):
            if detach() { again() }
            return false
        }
    }

    func transferReceived(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !isDetached.load(ordering: .acquiring) else { return false }
        return operation.received(bytes, maxBytes: operation.byteLimit(config))
    }

    func transferAllows(_ address: IPAddress, for url: URL) -> Bool {
        guard let reason = policy.refusal(for: address) else { return true }
        refused.withLock { $0 = $0 ?? (address, reason, url) }
        return false
    }

    func transferCompleted(_ outcome: CurlOutcome) {
        switch outcome {
        case .completed:
            complete(nil)
        case .headTooLarge:
            guard detach() else { return }
            operation.fail(.rejected(url: operation.url, reason: "the answer's heads passed \(CurlTransfer.maxHeadBytes) bytes"))
        case .malformedHead:
            complete(URLError(.badServerResponse))
        case .failed(let code, _):
            if let refusal = refused.withLock({ $0 }), code == CurlResultCode.couldNotConnect {
                guard detach() else { return }
                return operation.fail(.sourceRefused(address: refusal.address.description, reason: refusal.reason, url: refusal.url))
            }
            if code == CurlResultCode.tooManyRedirects {
                guard detach() else { return }
                return operation.fail(.tooManyRedirects(url: operation.url))
            }
            complete(CurlResultCode.urlError(for: code))
        }
    }

    private func complete(_ error: URLError?) {
        guard detach() else { return }
        operation.completed(error: error, config: config)
    }

    /// Marks the task done; false when it was already.
    private func detach() -> Bool {
        !isDetached.exchange(true, ordering: .acquiringAndReleasing)
    }
}
