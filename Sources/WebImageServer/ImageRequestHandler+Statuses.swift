import Foundation
import WebImage

extension ImageRequestHandler {
    /// The status for `error`, as ``status(for:)`` says; a URL on the manager's failed-URL
    /// blocklist is answered with the status of the failure that put it there (imgproxy answers
    /// each request with the source's own failure; a remembered one must not turn a 422 into a 404).
    func status(for error: WebImageError) -> (Int, String) {
        if case .blockedURL(let url) = error, let first = manager.failure(forFailedURL: url) {
            let (status, text) = Self.status(for: first)
            return (status, text + " (remembered: not fetched again for a while)")
        }
        return Self.status(for: error)
    }

    /// The status a CDN understands for each failure, and a short text without internals. As
    /// imgproxy 4 (its `errctx` statuses): a source's 4xx is passed through and its 5xx is 502; an
    /// unreachable source, a refused source address and too many redirects 404; a source that cannot
    /// be processed (not an image WebImage reads, too large in bytes or pixels, corrupt, incomplete,
    /// or asked for in a format that cannot be written) 422. WebImage's own difference: a bad option
    /// or URL is 400 (imgproxy answers 404), which says the URL, not the source, is wrong.
    static func status(for error: WebImageError) -> (Int, String) {
        switch error {
        case .invalidURL, .unsupportedOption: (400, "bad request")
        case .sourceRefused: (404, "the source address is not allowed")
        case .badStatusCode(404, _, _): (404, "the source was not found")
        case .badStatusCode(let code, _, _) where (400..<500).contains(code): (code, "the source answered \(code)")
        case .badStatusCode(let code, _, _): (502, "the source answered \(code)")
        case .responseTooLarge: (422, "the source file is too large")
        case .unacceptableContentType, .decodingFailed(.unsupportedFormat, _): (422, "the source is not an image WebImage reads")
        case .decodingFailed(.imageTooLarge, _), .decodingFailed(.animationTooLarge, _): (422, "the source's resolution is too large")
        case .encodingFailed(.imageTooLarge, _): (422, "the result would be too large")
        case .transformFailed: (422, "the image cannot be processed as asked (the result would be too large, or nothing would be left)")
        case .decodingFailed, .emptyResponse: (422, "the image cannot be decoded")
        case .truncatedResponse: (422, "the source's answer is incomplete")
        case .encodingFailed(.unsupportedEncoding, _): (422, "the output format cannot be written")
        case .encodingFailed: (500, "the image cannot be encoded")
        case .timedOut: (504, "the source timed out")
        case .blockedURL: (404, "the source failed recently and is not fetched again for a while")
        case .transport(let error, _) where [.fileDoesNotExist, .fileIsDirectory, .noPermissionsToReadFile].contains(error.code):
            (404, "the source was not found")   // a local:/// source that is missing, a folder, or unreadable
        case .transport, .tooManyRedirects, .rejected: (404, "the source is unreachable")
        case .notModified: (502, "the source failed")
        case .cancelled, .shutDown: (503, "the server is stopping")
        case .notInCache, .cacheStoreFailed: (500, "internal error")
        }
    }
}
