import Foundation
import WebImage

/// Loads `s3://bucket/key` URLs from an S3-compatible store (private buckets included): the
/// ``ImageLoader`` that lets ``WebImageManager/loadImage(url:options:context:)``, `loadVariant`,
/// `webimage fetch` and `webimage serve` take them. Add it beside the downloader:
/// `LoadersManager(loaders: [Downloader(), FileLoader(), S3Loader(client: S3Client(config: …))])`.
///
/// A cached copy is revalidated as HTTP sources are (`If-None-Match` with the object's `ETag`, else
/// `If-Modified-Since` with its `Last-Modified`; a 304 keeps it). A missing object is a 404, a refused one a
/// 403 (``WebImageError/badStatusCode(_:url:retryAfter:)``); time-outs, 5xx and `SlowDown` are
/// retried by the client first (``S3ClientConfig``). Concurrent loads of one URL are shared by the
/// manager's load coalescing.
public struct S3Loader: ImageLoader {
    /// The client the objects are read with.
    public let client: S3Client

    /// Creates a loader over `client`.
    public init(client: S3Client) {
        self.client = client
    }

    /// Whether `url` is an `s3://bucket/key` URL.
    public func canLoad(_ url: URL) -> Bool {
        url.scheme?.lowercased() == "s3" && !(url.host ?? "").isEmpty && url.path.count > 1
    }

    /// Reads the object, reporting it as one chunk.
    /// - Throws: ``WebImageError``: `notModified` for a 304, `badStatusCode` for 403, 404 and other
    ///   refusals, `responseTooLarge` past the request's byte limit, `truncatedResponse` for a cut
    ///   answer, `timedOut` and `transport` when the store cannot be reached, `cancelled`.
    public func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler?) async throws -> ImageLoadResponse {
        let url = request.url
        guard canLoad(url), let bucket = url.host else { throw WebImageError.invalidURL(url.absoluteString) }
        let key = String(url.path.dropFirst())
        var headers: [String: String] = [:]
        // The ETag alone when there is one (S3 always sends it): `Last-Modified` has a one-second
        // resolution, and an object rewritten within that second would look unchanged.
        if let tag = request.validators?.entityTag {
            headers["If-None-Match"] = tag
        } else if let date = request.validators?.lastModified {
            headers["If-Modified-Since"] = date
        }
        let started = ContinuousClock.now
        let response: S3Client.Response
        do {
            response = try await client.get(bucket: bucket, key: key, headers: headers)
        } catch {
            if Task.isCancelled { throw WebImageError.cancelled(url: url) }
            switch error {
            case .status(let status, _): throw WebImageError.badStatusCode(status, url: url)
            case .truncated(let received, let expected): throw WebImageError.truncatedResponse(received: received, expected: expected, url: url)
            case .transport(let reason) where reason.contains("timedOut"): throw WebImageError.timedOut(url: url)
            case .transport, .unavailable, .malformed:
                throw WebImageError.transport(URLError(.cannotConnectToHost), url: url)
            }
        }
        if response.status == 304 { throw WebImageError.notModified(url: url) }
        if let limit = request.maxResponseBytes, response.body.count > limit { throw WebImageError.responseTooLarge(limit: limit, url: url) }
        progress?(ImageLoadProgress(receivedBytes: response.body.count, expectedBytes: response.body.count, chunk: response.body))
        var metrics = DownloadMetrics()
        metrics.transferDuration = .now - started
        metrics.timeToResponse = metrics.transferDuration
        return ImageLoadResponse(data: response.body, url: url, statusCode: response.status, contentType: response.headers["content-type"],
                                 headers: response.headers, metrics: metrics)
    }
}
