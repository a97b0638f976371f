import Foundation

/// Timings and sizes of one download (Linux's URLSession never reports its own metrics).
public struct DownloadMetrics: Sendable, Hashable {
    /// Time spent waiting for a free download slot.
    public var queuedDuration: Duration = .zero
    /// Time from starting the request to its response headers.
    public var timeToResponse: Duration = .zero
    /// Time from starting the request to its last byte.
    public var transferDuration: Duration = .zero
    /// Body bytes received, the ones a resumed download took from its kept partial included.
    public var receivedBytes = 0
    /// The bytes at the start of the body that came from a partial kept when an earlier download of
    /// the URL was cut short (see ``DownloaderConfig/maxResumableDataBytes``); 0 when the whole body
    /// came with this transfer.
    public var resumedBytes = 0
    /// Redirects followed.
    public var redirectCount = 0

    /// Creates zeroed metrics.
    public init() {}
}
