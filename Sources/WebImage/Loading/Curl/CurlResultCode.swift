import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// libcurl's result codes (`CURLcode`) that WebImage tells apart, and the `URLError` each maps to:
/// the one place that decides what a libcurl failure means to a caller.
enum CurlResultCode {
    static let couldNotConnect = Int32(WI_CURLE_COULDNT_CONNECT)
    static let tooManyRedirects = Int32(WI_CURLE_TOO_MANY_REDIRECTS)
    static let timedOut = Int32(WI_CURLE_OPERATION_TIMEDOUT)

    /// The `URLError` URLSession reports for the same failure (a ``DownloadOperation`` maps those
    /// to ``WebImageError``: a body cut short of its `Content-Length` becomes `truncatedResponse`).
    static func urlError(for code: Int32) -> URLError {
        switch Int(code) {
        // Only http and https are ever asked for: this is an HTTP/0.9 (not HTTP) answer, or a redirect elsewhere.
        case Int(WI_CURLE_UNSUPPORTED_PROTOCOL): URLError(.badServerResponse)
        case Int(WI_CURLE_URL_MALFORMAT): URLError(.badURL)
        case Int(WI_CURLE_COULDNT_RESOLVE_HOST), Int(WI_CURLE_COULDNT_RESOLVE_PROXY): URLError(.cannotFindHost)
        case Int(WI_CURLE_COULDNT_CONNECT): URLError(.cannotConnectToHost)
        case Int(WI_CURLE_OPERATION_TIMEDOUT): URLError(.timedOut)
        case Int(WI_CURLE_PARTIAL_FILE), Int(WI_CURLE_RECV_ERROR), Int(WI_CURLE_SEND_ERROR), Int(WI_CURLE_GOT_NOTHING):
            URLError(.networkConnectionLost)
        case Int(WI_CURLE_PEER_FAILED_VERIFICATION): URLError(.serverCertificateUntrusted)
        case Int(WI_CURLE_SSL_CONNECT_ERROR), Int(WI_CURLE_SSL_CACERT_BADFILE): URLError(.secureConnectionFailed)
        case Int(WI_CURLE_WEIRD_SERVER_REPLY), Int(WI_CURLE_HTTP2), Int(WI_CURLE_HTTP2_STREAM), Int(WI_CURLE_BAD_CONTENT_ENCODING):
            URLError(.badServerResponse)
        case Int(WI_CURLE_WRITE_ERROR): URLError(.cancelled)
        default: URLError(.unknown)
        }
    }

    /// libcurl's text for `code`.
    static func message(for code: Int32) -> String {
        String(cString: wi_curl_strerror(code))
    }
}
