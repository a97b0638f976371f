import Foundation

/// One network fetch of a ``Downloader``, as ``WebImageEvent/downloadFinished(_:)`` reports it.
public struct DownloadReport: Sendable {
    /// The URL requested.
    public var url: URL
    /// The HTTP status of the final response, when one came (a refused status included).
    public var statusCode: Int?
    /// Body bytes received (a resumed download's kept bytes included).
    public var receivedBytes: Int
    /// Timings and sizes; zero for a fetch that never left the queue.
    public var metrics: DownloadMetrics
    /// Why the fetch failed or was refused; `nil` when it succeeded.
    public var error: WebImageError?

    /// Creates a report (the downloader makes them; tests and bridges may too).
    public init(url: URL, statusCode: Int?, receivedBytes: Int, metrics: DownloadMetrics, error: WebImageError?) {
        self.url = url
        self.statusCode = statusCode
        self.receivedBytes = receivedBytes
        self.metrics = metrics
        self.error = error
    }
}
