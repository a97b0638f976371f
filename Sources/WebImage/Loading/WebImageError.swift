import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every failure a caller of WebImage can act on, each carrying the URL it concerns and a message a
/// person can read.
///
/// It lives with the loaders because the ``Downloader`` is the first role that throws it;
/// ``WebImageManager`` adds the cases that concern the whole pipeline.
public enum WebImageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The URL is missing, empty, or not one any loader can fetch.
    case invalidURL(String?)
    /// The server answered with a status outside ``DownloaderConfig/acceptableStatusCodes``.
    case badStatusCode(Int, url: URL)
    /// The response's `Content-Type` is not in ``DownloaderConfig/acceptableContentTypes``.
    case unacceptableContentType(String?, url: URL)
    /// The response is larger than ``DownloaderConfig/maxResponseBytes`` (by `Content-Length` or by
    /// the bytes received); the download was stopped.
    case responseTooLarge(limit: Int, url: URL)
    /// The body ended before the `Content-Length` the server promised.
    case truncatedResponse(received: Int, expected: Int, url: URL)
    /// The server sent no bytes.
    case emptyResponse(url: URL)
    /// The download took longer than ``DownloaderConfig/downloadTimeout``, or stalled for longer than
    /// ``DownloaderConfig/idleTimeout``.
    case timedOut(url: URL)
    /// The caller's task was cancelled, or ``Downloader/cancelAll()`` was called.
    case cancelled(url: URL)
    /// The server answered 304 to a conditional request: the cached copy is still current.
    case notModified(url: URL)
    /// More redirects than ``DownloaderConfig/maxRedirects``.
    case tooManyRedirects(url: URL)
    /// The request or response modifier refused the request or response.
    case rejected(url: URL, reason: String)
    /// The connection failed (DNS, refused, reset, TLS...): the underlying `URLError`.
    case transport(URLError, url: URL)

    /// The URL the failure concerns (`nil` only for an invalid URL).
    public var url: URL? {
        switch self {
        case .invalidURL: nil
        case .badStatusCode(_, let url), .unacceptableContentType(_, let url), .responseTooLarge(_, let url),
             .truncatedResponse(_, _, let url), .emptyResponse(let url), .timedOut(let url), .cancelled(let url),
             .notModified(let url), .tooManyRedirects(let url), .rejected(let url, _), .transport(_, let url):
            url
        }
    }

    /// Whether trying again later may succeed (time-outs, connection errors, 5xx, 408, 429,
    /// cancellation), as opposed to failures the same request will always meet.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .cancelled, .transport, .truncatedResponse: true
        case .badStatusCode(let code, _): code >= 500 || code == 408 || code == 429
        default: false
        }
    }

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .invalidURL(let text): "invalid URL: \(text.map { "'\($0)'" } ?? "none given")"
        case .badStatusCode(let code, let url):
            "\(url.absoluteString) answered HTTP \(code) (\(HTTPURLResponse.localizedString(forStatusCode: code)))"
        case .unacceptableContentType(let type, let url):
            "\(url.absoluteString) sent Content-Type \(type ?? "(none)"), which is not accepted"
        case .responseTooLarge(let limit, let url): "\(url.absoluteString) is larger than the limit of \(limit) bytes"
        case .truncatedResponse(let received, let expected, let url):
            "\(url.absoluteString) ended after \(received) of \(expected) bytes"
        case .emptyResponse(let url): "\(url.absoluteString) sent an empty body"
        case .timedOut(let url): "\(url.absoluteString) timed out"
        case .cancelled(let url): "the load of \(url.absoluteString) was cancelled"
        case .notModified(let url): "\(url.absoluteString) is not modified since the cached copy (HTTP 304)"
        case .tooManyRedirects(let url): "\(url.absoluteString) redirected too many times"
        case .rejected(let url, let reason): "\(url.absoluteString) was rejected: \(reason)"
        case .transport(let error, let url): "\(url.absoluteString) could not be fetched: \(error.localizedDescription) (URLError \(error.code.rawValue))"
        }
    }
}
