import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network task a ``DownloadOperation`` holds while its bytes arrive: a URLSession data task, or
/// a ``CurlDownloadTask`` over ``CurlEngine``. The operation only stops it and changes its priority.
protocol DownloadTransportTask: AnyObject, Sendable {
    /// Stops the transfer; its completion, if it still comes, reports a cancellation.
    func cancel()
    /// Applies the download's priority (a hint: only URLSession's tasks use it).
    func setPriority(_ priority: DownloadPriority)
}

extension URLSessionDataTask: DownloadTransportTask {
    func setPriority(_ priority: DownloadPriority) {
        self.priority = switch priority {
        case .high: URLSessionTask.highPriority
        case .low: URLSessionTask.lowPriority
        case .normal: URLSessionTask.defaultPriority
        }
    }
}
