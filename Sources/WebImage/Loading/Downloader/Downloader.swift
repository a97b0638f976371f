import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads image bytes over HTTP(S), fetching each URL once however many callers wait for it:
/// `http://` and `https://` through libcurl's multi interface (or URLSession:
/// ``DownloaderConfig/transport``).
///
/// - **De-duplication**: callers asking for the same request while it is queued or running share one
///   network task and get the same bytes. A caller whose task is cancelled stops waiting at once
///   (``WebImageError/cancelled(url:)``); the network task stops only when no caller waits on it.
/// - **Limits and order**: at most ``DownloaderConfig/maxConcurrentDownloads`` run (changeable while
///   running); the rest queue by ``DownloadPriority``, then FIFO or LIFO. A shared download takes its
///   most urgent waiter's priority.
/// - **Time-outs**: a total deadline (``DownloaderConfig/downloadTimeout``) enforced here, to the
///   millisecond, from the moment a download leaves the queue; and an idle time-out.
/// - **Checks**: status codes, content types, a size limit (before reading and while reading), a body
///   shorter than its `Content-Length`, empty bodies, redirect limits.
/// - **Resuming**: a download cut short (or timed out, or cancelled) after part of a body whose
///   response sent `Accept-Ranges: bytes` and a strong `ETag` or a `Last-Modified` date leaves its
///   bytes behind, up to ``DownloaderConfig/maxResumableDataBytes`` in all (least recently kept dropped
///   first). The next request for the URL sends `Range: bytes=N-` and `If-Range`; a `206` whose
///   `Content-Range` starts at byte N and whose validator matches is appended to them, and the caller
///   gets the whole body (progress counting from the whole size; ``DownloadMetrics/resumedBytes``
///   says how much was kept). A `200` (the image changed, or the server ignores ranges) starts over
///   from byte 0; a `206` that does not continue the kept bytes exactly, or a `416`, drops them and
///   sends the request again without `Range`: kept bytes are never joined to anything but their
///   own continuation. A request with its own `Range` or validators (a revalidation) never resumes,
///   and a successful download drops its URL's kept bytes. They live in memory only, never in a cache.
///
/// Bytes arrive piece by piece from libcurl's write callback on its transfer thread (``CurlEngine``),
/// or through URLSession's data delegate (Linux has no `bytes(for:)`); neither stores a cache, and
/// no cookies are kept unless a request asks for them.
///
/// ## Concurrency: a lock-based class, not an actor
///
/// The engine (this folder; the map is in `DownloadScheduler.swift`) keeps its state behind locks,
/// so no call hops anywhere and URLSession's callbacks touch it directly:
///
/// - which downloads exist, queue and run: the `DownloadScheduler`'s `Mutex`;
/// - each download's waiters, bytes and verdict: its `DownloadOperation`'s `Mutex` (a ``SharedWork``
///   machine inside), taken after the scheduler's lock, never before;
/// - libcurl's transfers are handed to its engine thread from any thread (a lock and a wake-up), and
///   call back there; URLSession's tasks are created and resumed on a serial dispatch queue of the
///   downloader's, because URLSession makes the thread that does it wait for the session's own
///   queue, and call back on one serial delegate queue per downloader.
///
/// A caller's task only ever waits on a continuation; nothing blocks a thread of the cooperative pool.
public final class Downloader: ImageLoader {
    /// The downloader ``WebImageManager/shared`` uses, with the default ``DownloaderConfig``.
    public static let shared = Downloader()

    private let scheduler: DownloadScheduler

    /// Creates a downloader with its own URLSession.
    /// - Parameter config: limits, headers and checks; default `DownloaderConfig()`, whose defaults each property documents.
    public init(config: DownloaderConfig = DownloaderConfig()) {
        scheduler = DownloadScheduler(config: config)
    }

    /// The configuration in force. Change it with ``updateConfig(_:)``.
    public var config: DownloaderConfig { scheduler.config }

    /// Whether `url` is `http` or `https`.
    public func canLoad(_ url: URL) -> Bool {
        let scheme = url.scheme?.lowercased()
        return scheme == "http" || scheme == "https"
    }

    /// Downloads `request.url`, joining a download of the same request already queued or running.
    ///
    /// - Parameters:
    ///   - request: the URL, priority, extra headers, cookies and validators.
    ///   - progress: called with each chunk as it arrives (a late joiner first gets all bytes so far);
    ///     default `nil`.
    /// - Returns: the body and response metadata.
    /// - Throws: ``WebImageError``: `invalidURL` for a non-HTTP URL, `cancelled` at once when the
    ///   caller's task is cancelled, `timedOut`, `badStatusCode`, `unacceptableContentType`,
    ///   `responseTooLarge`, `truncatedResponse`, `emptyResponse`, `notModified` (conditional requests),
    ///   `tooManyRedirects`, `rejected`, `transport`.
    public func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler? = nil) async throws -> ImageLoadResponse {
        guard canLoad(request.url), request.url.host != nil else { throw WebImageError.invalidURL(request.url.absoluteString) }
        if Task.isCancelled { throw WebImageError.cancelled(url: request.url) }
        guard let (operation, waiterID) = scheduler.join(request) else { throw WebImageError.shutDown(url: request.url) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                operation.addWaiter(waiterID, continuation: continuation, progress: progress)
            }
        } onCancel: {
            operation.removeWaiter(waiterID)
        }
    }

    /// Loads with progress delivered as a stream of events: `.progress` as bytes arrive, then
    /// `.finished` with the response, or the load's error thrown.
    ///
    /// A slow consumer gets the chunks that arrived meanwhile merged into one event, so the stream
    /// never holds more than the bytes not yet consumed. Ending the iteration early or cancelling
    /// the consuming task cancels this caller's load (not a download other callers share).
    public func events(for request: ImageLoadRequest) -> DownloadEventStream {
        DownloadEventStream { progress in try await self.load(request, progress: progress) }
    }

    /// Sets (or, with `nil`, removes) a header field sent with every request from now on.
    public func setValue(_ value: String?, forHTTPHeaderField field: String) {
        scheduler.updateConfig { $0.httpHeaders[field] = value }
    }

    /// Changes the configuration; a higher concurrency limit starts queued downloads at once.
    public func updateConfig(_ change: (inout DownloaderConfig) -> Void) {
        scheduler.updateConfig(change)
    }

    /// Downloads running now.
    public var currentDownloadCount: Int { scheduler.runningCount }

    /// Downloads waiting for a slot.
    public var queuedDownloadCount: Int { scheduler.queuedCount }

    /// Network tasks started since the downloader was created (shared downloads count once).
    public var startedDownloadCount: Int { scheduler.startedCount }

    /// The partials of cut-short downloads kept for resuming (for tests and diagnostics).
    var partials: PartialDownloadStore { scheduler.partials }

    /// The downloads whose total deadline is being watched (for tests).
    var watchedDeadlineCount: Int { scheduler.watchedDeadlineCount }

    /// The callers waiting on the download for `request` (0 when none is under way).
    func callerCount(for request: ImageLoadRequest) -> Int {
        scheduler.callerCount(for: request)
    }

    /// Cancels every queued and running download; every waiting caller gets ``WebImageError/cancelled(url:)``.
    public func cancelAll() {
        scheduler.cancelAll()
    }

    /// Receives a ``WebImageEvent/downloadFinished(_:)`` per network fetch (refusals and failures
    /// included); default `nil`. ``WebImageManager/observer`` sets it for the manager's downloader.
    public var observer: (any WebImageObserver)? {
        get { scheduler.observer.current }
        set { scheduler.observer.current = newValue }
    }

    /// Stops for good: every queued and running download is cancelled (its callers get
    /// ``WebImageError/cancelled(url:)``), later loads throw ``WebImageError/shutDown(url:)``, and the
    /// URLSessions are invalidated (their connections closed). Calling it again does nothing.
    public func shutdown() async {
        await scheduler.shutdown()
    }
}

extension Downloader: ObservableLoader {
    func setObserver(_ observer: (any WebImageObserver)?) {
        self.observer = observer
    }
}
