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
    }

    private let entries = Mutex<[Int: Entry]>([:])

    func register(_ task: URLSessionTask, for operation: DownloadOperation, settings: DownloadScheduler.Settings) {
        entries.withLock { $0[task.taskIdentifier] = Entry(operation: operation, settings: settings) }
    }

    private func entry(for task: URLSessionTask) -> Entry? {
        entries.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        guard let entry = entry(for: dataTask) else {
            completionHandler(.cancel)
            return
        }
        completionHandler(entry.operation.received(response, config: entry.settings.config) ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let entry = entry(for: dataTask) else { return }
        if !entry.operation.received(data, maxBytes: entry.settings.config.maxResponseBytes) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let entry = entry(for: task) else {
            completionHandler(nil)
            return
        }
        completionHandler(entry.operation.willRedirect(maxRedirects: entry.settings.config.maxRedirects) ? request : nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let entry = entries.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        entry.operation.completed(error: error, config: entry.settings.config)
    }
}
