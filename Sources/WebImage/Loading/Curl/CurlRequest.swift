import Foundation

/// What one libcurl transfer sends and how it is bounded: made once by its caller (the downloader's
/// ``CurlDownloadTask``, the object store's ``CurlExchange``) and handed to a ``CurlTransfer``.
struct CurlRequest: Sendable {
    var url: URL
    var method = "GET"
    /// Header fields sent as they are; a name with an empty value removes a field libcurl would add.
    var headers: [(name: String, value: String)] = []
    var body: Data?
    /// Redirects libcurl follows (each address checked, only to http and https); 0 follows none.
    var maxRedirects = 0
    var connectTimeout: Duration?
    /// The whole transfer's limit, a backstop behind the caller's own deadline.
    var totalTimeout: Duration?
    /// The longest the transfer may go without receiving a byte (whole seconds, rounded up).
    var stallTimeout: Duration?
    /// Decode an answer's content coding (gzip, deflate, br, zstd) though none is asked for.
    var decodesContent = false
    /// Ask the delegate before each connection (``CurlTransferDelegate/transferAllows(_:)``).
    var checksAddresses = false
    var certificateAuthorityFile: String?
    var certificateAuthorityDirectory: String?
    /// The proxy's URL, when the transfer goes through one.
    var proxy: String?
    /// libcurl's receive buffer: larger pieces mean fewer callbacks for a large body.
    var bufferSize = 256 << 10
}

/// The head of an answer, as libcurl received it (redirects it followed and informational answers
/// are not handed on).
struct CurlHead: Sendable {
    var status: Int
    /// `HTTP/1.1`, `HTTP/2`.
    var version: String
    /// In the order received; repeated names kept.
    var fields: [(name: String, value: String)]
    /// The URL this answer is for (after the redirects followed).
    var url: URL
    /// The redirects libcurl followed to get here.
    var redirectCount = 0

    /// The fields with repeated names joined by ", ", as `HTTPURLResponse` wants them.
    var joinedFields: [String: String] {
        var joined: [String: String] = [:]
        for field in fields { joined[field.name] = joined[field.name].map { $0 + ", " + field.value } ?? field.value }
        return joined
    }

    /// The value of the field `name` (any case), the first if repeated.
    func value(of name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// How a transfer ended, as libcurl said, or refused by the transfer itself.
enum CurlOutcome: Sendable, Equatable {
    case completed
    /// libcurl's result code and its text.
    case failed(code: Int32, message: String)
    /// The head (or its 1xx answers, or the trailers) passed ``CurlTransfer/maxHeadBytes``.
    case headTooLarge
    /// A head libcurl passed on that is not HTTP, or frames its body two ways (conflicting
    /// `Content-Length` values).
    case malformedHead(String)
}

/// A transfer's events, on the engine's thread (``CurlEngine``): none may block.
protocol CurlTransferDelegate: AnyObject, Sendable {
    /// The final head; false stops the transfer (no completion follows: the delegate has decided).
    func transferReceivedHead(_ head: CurlHead) -> Bool
    /// A piece of the body, valid during the call; false stops the transfer.
    func transferReceived(_ bytes: UnsafeRawBufferPointer) -> Bool
    /// Whether a connection to `address` may be made for `url` (the first request's, or a
    /// redirect's), asked only with ``CurlRequest/checksAddresses``.
    func transferAllows(_ address: IPAddress, for url: URL) -> Bool
    /// The end, once, unless the delegate stopped the transfer itself or it was cancelled.
    func transferCompleted(_ outcome: CurlOutcome)
}
