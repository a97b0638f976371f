import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What both transports (URLSession's ``SessionDelegate`` and ``CurlDownloadTask``) decide the same
/// way when a response or a redirect arrives for a ``DownloadOperation``.
enum TransferRouting {
    /// What to do with a response's body.
    enum ResponseVerdict {
        /// Read it.
        case proceed
        /// Stop the transfer (the operation has failed, or will fail).
        case stop
        /// Stop this transfer without ending the download and send the request again without
        /// `Range` (the response cannot continue the partial it asked for).
        case restart(@Sendable () -> Void)
    }

    /// Hands `response` to `operation`; `restart` is the request sent again without `Range`, when
    /// this one asked for the rest of a partial.
    static func verdict(for response: URLResponse, operation: DownloadOperation, config: DownloaderConfig,
                        restart: (@Sendable () -> Void)?) -> ResponseVerdict {
        let proceeds = operation.received(response, config: config)
        if !proceeds, operation.takeRestartRequest() {
            if let restart { return .restart(restart) }
            operation.fail(.transport(URLError(.badServerResponse), url: operation.url))
        }
        return proceeds ? .proceed : .stop
    }

    /// Answers a redirect to `request`: checked like the first request against the source-address
    /// policy (a refusal fails the operation and `answer` is never called), then counted by the
    /// operation (`answer(nil)` past ``DownloaderConfig/maxRedirects``, nothing once it has finished).
    static func answerRedirect(to request: URLRequest, operation: DownloadOperation, config: DownloaderConfig,
                               _ answer: @escaping @Sendable (URLRequest?) -> Void) {
        guard let host = request.url?.host, config.sourceAddressPolicy != .unrestricted else {
            return operation.answerRedirect(maxRedirects: config.maxRedirects, request: request, answer)
        }
        SourceAddressCheck.check(host: host, policy: config.sourceAddressPolicy) { refused in
            if let refused, let url = request.url {
                operation.fail(.sourceRefused(address: refused.address.description, reason: refused.reason, url: url))
            } else {
                operation.answerRedirect(maxRedirects: config.maxRedirects, request: request, answer)
            }
        }
    }
}
