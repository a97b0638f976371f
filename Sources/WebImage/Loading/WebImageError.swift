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
    /// The server answered with a status outside ``DownloaderConfig/acceptableStatusCodes``;
    /// `retryAfter` is its `Retry-After` header (seconds or an HTTP date), if it sent one.
    case badStatusCode(Int, url: URL, retryAfter: Duration? = nil)
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
    /// The URL's host (or a redirect's) resolves to `address`, which the downloader's
    /// ``DownloaderConfig/sourceAddressPolicy`` refuses (`reason` names its range, such as
    /// "link-local"); nothing was sent to it. Never blocklists the URL: the policy decided, not the URL.
    case sourceRefused(address: String, reason: String, url: URL)
    /// The connection failed (DNS, refused, reset, TLS...): the underlying `URLError`.
    case transport(URLError, url: URL)
    /// The URL failed permanently a short while ago and is on ``WebImageManager``'s blocklist; pass
    /// ``WebImageOptions/retryFailed`` to try it anyway.
    case blockedURL(URL)
    /// ``WebImageOptions/fromCacheOnly`` was given and no cache tier has the image.
    case notInCache(url: URL)
    /// The bytes arrived but are not an image a registered coder can decode.
    case decodingFailed(ImageCodingError, url: URL)
    /// A variant could not be encoded in the format asked for (no coder for it, or its library failed).
    case encodingFailed(ImageCodingError, url: URL)
    /// The context's ``ImageTransformer`` threw: its error, or a custom transformer's error described
    /// as ``ImageTransformError/other(_:)``.
    case transformFailed(ImageTransformError, url: URL)
    /// An option this platform cannot honour was asked for (`name` says which, the message why).
    case unsupportedOption(String, url: URL)
    /// ``WebImageOptions/waitStoreCache`` was given and the disk tier could not store the image: its
    /// error, or another cache's error described as ``DiskCacheError/other(_:)``.
    case cacheStoreFailed(DiskCacheError, url: URL)
    /// The manager or loader was shut down (``WebImageManager/shutdown(_:)``) before this load started.
    case shutDown(url: URL)

    /// The URL the failure concerns (`nil` only for an invalid URL).
    public var url: URL? {
        switch self {
        case .invalidURL: nil
        case .badStatusCode(_, let url, _), .unacceptableContentType(_, let url), .responseTooLarge(_, let url),
             .truncatedResponse(_, _, let url), .emptyResponse(let url), .timedOut(let url), .cancelled(let url),
             .notModified(let url), .tooManyRedirects(let url), .rejected(let url, _), .transport(_, let url), .sourceRefused(_, _, let url),
             .blockedURL(let url), .notInCache(let url), .decodingFailed(_, let url), .encodingFailed(_, let url), .transformFailed(_, let url),
             .unsupportedOption(_, let url), .cacheStoreFailed(_, let url), .shutDown(let url):
            url
        }
    }

    /// Whether trying again later may succeed (time-outs, connection errors, 5xx, 408, 429,
    /// cancellation, image data that ends early — a body without Content-Length cut short by the
    /// connection), as opposed to failures the same request will always meet.
    public var isTransient: Bool {
        switch self {
        case .timedOut, .cancelled, .transport, .truncatedResponse, .cacheStoreFailed: true
        case .decodingFailed(.truncatedData, _): true
        case .badStatusCode(let code, _, _): code >= 500 || code == 408 || code == 429
        default: false
        }
    }

    /// Whether the URL itself is at fault, so that ``WebImageManager`` puts it on its failed-URL
    /// blocklist: a 4xx other than 408 and 429, bytes that are not a decodable image, an empty, too
    /// large or wrongly typed body, a redirect loop, a URL no loader can fetch. Image data that ends
    /// early does not: the connection more likely broke than the file.
    public var blocksURL: Bool {
        switch self {
        case .decodingFailed(.truncatedData, _): false
        case .invalidURL, .decodingFailed, .emptyResponse, .responseTooLarge, .unacceptableContentType, .tooManyRedirects:
            true
        case .badStatusCode(let code, _, _): (400..<500).contains(code) && code != 408 && code != 429
        default: false
        }
    }

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .invalidURL(let text): "invalid URL: \(text.map { "'\($0)'" } ?? "none given")"
        case .badStatusCode(let code, let url, _):
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
        case .sourceRefused(let address, let reason, let url):
            "\(url.absoluteString) was not fetched: its host resolves to \(address) (\(reason)), which the source address policy refuses"
        case .transport(let error, let url): "\(url.absoluteString) could not be fetched: \(Self.explanation(of: error.code)) (URLError \(error.code.rawValue))"
        case .blockedURL(let url):
            "\(url.absoluteString) failed recently and is blocked until its blocklist entry expires (use .retryFailed to try it now)"
        case .notInCache(let url): "\(url.absoluteString) is not in the cache and .fromCacheOnly forbids downloading it"
        case .decodingFailed(let error, let url): "\(url.absoluteString) could not be decoded: \(error)"
        case .encodingFailed(let error, let url): "the image of \(url.absoluteString) could not be encoded: \(error)"
        case .transformFailed(let error, let url): "the image of \(url.absoluteString) could not be transformed: \(error)"
        case .unsupportedOption(let name, let url): "\(url.absoluteString): \(name) is not supported on this platform"
        case .cacheStoreFailed(let error, let url): "the image of \(url.absoluteString) could not be stored on disk: \(error)"
        case .shutDown(let url): "\(url.absoluteString) was not loaded: WebImage is shut down"
        }
    }

    /// Words for the `URLError` codes loads meet most (Linux's own messages are generic).
    static func explanation(of code: URLError.Code) -> String {
        switch code {
        case .fileDoesNotExist: "no such file"
        case .noPermissionsToReadFile: "permission denied"
        case .fileIsDirectory: "it is a directory"
        case .cannotConnectToHost: "the connection was refused"
        case .cannotFindHost: "the host name could not be resolved"
        case .networkConnectionLost: "the connection was lost"
        case .notConnectedToInternet: "there is no network connection"
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            "the TLS connection failed (certificate or handshake)"
        case .badServerResponse: "the server's response is not valid HTTP"
        case .timedOut: "the server did not answer in time"
        case .unknown: "the transfer failed (for example, the server sent more header data than allowed)"
        default: "URLSession error \(code.rawValue)"
        }
    }

    /// Any error a loader or coder threw for `url`, as the ``WebImageError`` a caller sees: a
    /// coder's error becomes `decodingFailed`, a `CancellationError` `cancelled`, a `URLError`
    /// `transport`, anything else `rejected` with its description.
    init(_ error: any Error, url: URL) {
        self = switch error {
        case let error as WebImageError: error
        case let error as ImageCodingError: .decodingFailed(error, url: url)
        case is CancellationError: .cancelled(url: url)
        case let error as URLError: .transport(error, url: url)
        default: .rejected(url: url, reason: "\(error)")
        }
    }
}
