import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads image bytes over HTTP(S) with URLSession, fetching each URL once however many callers
/// wait for it.
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
/// Streaming goes through URLSession's data delegate (Linux has no `bytes(for:)`); the session stores
/// no cache and no cookies unless a request asks for cookies. Its bookkeeping sits behind a lock, so
/// no call hops onto the actor; network tasks are created and resumed on a serial queue of the
/// downloader's, because URLSession makes the thread that does it wait for the session's own queue.
public actor Downloader: ImageLoader {
    /// The downloader ``WebImageManager/shared`` uses, with the default ``DownloaderConfig``.
    public static let shared = Downloader()

    private nonisolated let scheduler: DownloadScheduler

    /// Creates a downloader with its own URLSession.
    /// - Parameter config: limits, headers and checks; default `DownloaderConfig()`, whose defaults each property documents.
    public init(config: DownloaderConfig = DownloaderConfig()) {
        scheduler = DownloadScheduler(config: config)
    }

    /// The configuration in force. Change it with ``updateConfig(_:)``.
    public nonisolated var config: DownloaderConfig { scheduler.state.withLock { $0.config } }

    /// Whether `url` is `http` or `https`.
    public nonisolated func canLoad(_ url: URL) -> Bool {
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
    public nonisolated func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler? = nil) async throws -> ImageLoadResponse {
        guard canLoad(request.url), request.url.host != nil else { throw WebImageError.invalidURL(request.url.absoluteString) }
        if Task.isCancelled { throw WebImageError.cancelled(url: request.url) }
        let (operation, waiterID) = scheduler.join(request)
        let scheduler = self.scheduler
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if operation.addWaiter(waiterID, continuation: continuation, progress: progress) {
                    scheduler.abandonIfUnwanted(operation)
                }
            }
        } onCancel: {
            if operation.removeWaiter(waiterID) { scheduler.abandonIfUnwanted(operation) }
        }
    }

    /// Loads with progress delivered as a stream of events: `.progress` as bytes arrive, then
    /// `.finished` with the response, or the load's error thrown.
    ///
    /// A slow consumer gets the chunks that arrived meanwhile merged into one event, so the stream
    /// never holds more than the bytes not yet consumed. Ending the iteration early or cancelling
    /// the consuming task cancels this caller's load (not a download other callers share).
    public nonisolated func events(for request: ImageLoadRequest) -> DownloadEventStream {
        DownloadEventStream { progress in try await self.load(request, progress: progress) }
    }

    /// Sets (or, with `nil`, removes) a header field sent with every request from now on.
    public nonisolated func setValue(_ value: String?, forHTTPHeaderField field: String) {
        scheduler.updateConfig { $0.httpHeaders[field] = value }
    }

    /// Changes the configuration; a higher concurrency limit starts queued downloads at once.
    public nonisolated func updateConfig(_ change: (inout DownloaderConfig) -> Void) {
        scheduler.updateConfig(change)
    }

    /// Downloads running now.
    public nonisolated var currentDownloadCount: Int { scheduler.state.withLock { $0.running.count } }

    /// Downloads waiting for a slot.
    public nonisolated var queuedDownloadCount: Int { scheduler.state.withLock { $0.queued.count } }

    /// Network tasks started since the downloader was created (shared downloads count once).
    public nonisolated var startedDownloadCount: Int { scheduler.state.withLock { $0.totalStarted } }

    /// The partials of cut-short downloads kept for resuming (for tests and diagnostics).
    nonisolated var partials: PartialDownloadStore { scheduler.partials }

    /// The downloads whose total deadline is being watched (for tests).
    nonisolated var watchedDeadlineCount: Int { scheduler.watchedDeadlineCount }

    /// The callers waiting on the download for `request` (0 when none is under way).
    nonisolated func callerCount(for request: ImageLoadRequest) -> Int {
        scheduler.callerCount(for: request)
    }

    /// Cancels every queued and running download; every waiting caller gets ``WebImageError/cancelled(url:)``.
    public nonisolated func cancelAll() {
        scheduler.cancelAll()
    }
}
