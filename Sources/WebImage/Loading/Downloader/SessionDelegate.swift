import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Routes URLSession's delegate callbacks (on its serial delegate queue) to the
/// ``DownloadOperation`` each task belongs to.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Entry {
        var operation: DownloadOperation
        var settings: DownloadScheduler.Settings
        /// Sends the request again without `Range` (for a request that asks for the rest of a partial).
        var restart: (@Sendable () -> Void)?
    }

    /// Keyed by the task object, not its `taskIdentifier`: identifiers count from 1 in each session, and
    /// one delegate serves two sessions (with and without cookies). An entry goes when its task
    /// completes, before URLSession lets the task go, so an identifier is never reused while registered.
    private let entries = Mutex<[ObjectIdentifier: Entry]>([:])

    func register(_ task: URLSessionTask, for operation: DownloadOperation, settings: DownloadScheduler.Settings,
                  restart: (@Sendable () -> Void)? = nil) {
        entries.withLock { $0[ObjectIdentifier(task)] = Entry(operation: operation, settings: settings, restart: restart) }
    }

    private func entry(for task: URLSessionTask) -> Entry? {
        entries.withLock { $0[ObjectIdentifier(task)] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let entry = entry(for: dataTask) else {
            completionHandler(.cancel)
            return
        }
        switch TransferRouting.verdict(for: response, operation: entry.operation, config: entry.settings.config, restart: entry.restart) {
        case .proceed:
            completionHandler(.allow)
        case .stop:
            completionHandler(.cancel)
        case .restart(let restart):
            // Forget the task first: its cancellation must not end the download, which goes on
            // with a new request for the whole body.
            entries.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(dataTask)) }
            completionHandler(.cancel)
            restart()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let entry = entry(for: dataTask) else { return }
        if !entry.operation.received(data, maxBytes: entry.operation.byteLimit(entry.settings.config)) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let entry = entry(for: task) else {
            completionHandler(nil)
            return
        }
        // A refusal fails the operation, which cancels the task, and the redirect is never answered
        // (an answer after the cancel would trap).
        TransferRouting.answerRedirect(to: request, operation: entry.operation, config: entry.settings.config, completionHandler)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        entry.operation.completed(error: error, config: entry.settings.config)
    }
}
