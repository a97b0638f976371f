import Foundation

/// Where a server routes what WebImage does to its logs, metrics or traces (swift-log, swift-metrics,
/// OpenTelemetry), without WebImage depending on any of them.
///
/// Set one on the manager (``WebImageManager/observer``): it then also receives the events of the
/// manager's ``ImageCache`` and ``Downloader`` (through a ``LoadersManager`` too). A cache or
/// downloader used on its own takes one directly (``ImageCache/observer``, ``Downloader/observer``).
///
/// ``observe(_:)`` is called synchronously on the thread that did the work (a task of the
/// cooperative pool, URLSession's delegate queue), once per event, possibly from several threads at
/// once: keep it short and thread-safe, and hand anything slow to a queue of your own. With no
/// observer set, nothing is built or measured: a memory hit costs one atomic load more.
public protocol WebImageObserver: Sendable {
    /// Receives one event.
    func observe(_ event: WebImageEvent)
}

/// Something WebImage did that a server may want to log, count or time.
public enum WebImageEvent: Sendable {
    /// A load ended, with its result or its error: what it was, where the image came from, how many
    /// bytes, and the time spent in each stage.
    case loadFinished(ImageLoadReport)
    /// A ``WebImageManager/loadVariant(url:format:encoding:options:context:)`` call ended, with its
    /// bytes or its error: where they came from, their size, and the encode's time.
    case variantFinished(VariantLoadReport)
    /// A load's download failed with a transient error and the manager's ``RetryPolicy`` tries again
    /// after `delay`; `attempt` is the attempt that failed (1 for the first).
    case loadRetried(url: URL, attempt: Int, error: WebImageError, delay: Duration)
    /// A network fetch ended: its status, bytes and timings, or the error that refused or ended it
    /// (a bad status, an unacceptable type, a body too large, a time-out...). A shared download is
    /// reported once, however many callers waited for it.
    case downloadFinished(DownloadReport)
    /// The memory tier evicted `count` entries of `cost` in all to stay within its limits (or all
    /// of them, on memory pressure).
    case memoryEvicted(count: Int, cost: Int)
    /// The disk tier swept expired or least recently used entries (at start-up, on its timer, or
    /// when a store passed the size limit).
    case diskSwept(DiskCacheSweepReport)
    /// A disk write that nobody waited for failed (the load itself succeeded; the disk lost its copy).
    case diskWriteFailed(key: String, error: DiskCacheError)
}


