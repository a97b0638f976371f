import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The order queued downloads of the same priority start in.
public enum DownloadExecutionOrder: Sendable, Hashable {
    /// First in, first out (the default).
    case fifo
    /// Last in, first out: the newest request starts first (what a scrolling list wants).
    case lifo
}

/// Rewrites a request before it is sent; returning `nil` refuses it with ``WebImageError/rejected(url:reason:)``.
public typealias RequestModifier = @Sendable (URLRequest) async -> URLRequest?
/// Checks or rewrites a response's headers before its body is read; returning `nil` refuses it with
/// ``WebImageError/rejected(url:reason:)``.
public typealias ResponseModifier = @Sendable (HTTPURLResponse) -> HTTPURLResponse?
/// Transforms the downloaded bytes before they are decoded or cached (decryption, say); returning `nil`
/// fails the load with ``WebImageError/rejected(url:reason:)``.
public typealias DataTransformer = @Sendable (Data, ImageLoadResponse) -> Data?

/// How a ``Downloader`` fetches: limits, order, time-outs, headers and checks.
public struct DownloaderConfig: Sendable {
    /// Downloads running at once; default 6. Queued requests wait; time spent queued does not count
    /// against the time-outs.
    public var maxConcurrentDownloads: Int
    /// Downloads running at once against one host; `nil` (the default) means only the overall limit.
    public var maxConcurrentDownloadsPerHost: Int?
    /// The order queued requests of equal priority start in; default ``DownloadExecutionOrder/fifo``.
    public var executionOrder: DownloadExecutionOrder
    /// The most a download may take from its start to its last byte, enforced by the downloader
    /// itself to the millisecond; default 15 seconds.
    public var downloadTimeout: Duration
    /// The longest a download may go without receiving a byte; default 15 seconds. (URLSession
    /// enforces it in whole seconds, rounded up here.)
    public var idleTimeout: Duration
    /// Header fields sent with every request; default `Accept: image/*,*/*;q=0.8` and a `User-Agent`
    /// naming WebImage. Change with ``Downloader/setValue(_:forHTTPHeaderField:)``.
    public var httpHeaders: [String: String]
    /// A user name and password sent as HTTP basic authentication with every request; default `nil`.
    public var basicAuthentication: (username: String, password: String)?
    /// A credential whose user and password are sent as HTTP basic authentication with every request
    /// (it takes precedence over ``basicAuthentication``); default `nil`. A credential without a
    /// password (a client certificate, say) is not used: URLSession on Linux cannot present one.
    public var credential: URLCredential?
    /// Redirects followed before failing with ``WebImageError/tooManyRedirects(url:)``; default 10.
    public var maxRedirects: Int
    /// Statuses treated as success; default `200..<300`.
    public var acceptableStatusCodes: Set<Int>
    /// MIME types (`image/png`, or `image/*` for a family) accepted; `nil` (the default) accepts any.
    public var acceptableContentTypes: Set<String>?
    /// The largest body accepted, checked against `Content-Length` before reading and against the
    /// bytes received; default 64 MiB. WebImage asks for no content coding; an answer with one anyway
    /// (gzip, deflate, br, zstd) is decoded by the libcurl transport and the limit counts the decoded
    /// bytes, so a compression bomb is cut at the limit (memory stays at the limit plus libcurl's
    /// 16 KiB piece).
    public var maxResponseBytes: Int
    /// Runs on every request before it is sent; default `nil`.
    public var requestModifier: RequestModifier?
    /// Runs on every response before its body is read; default `nil`.
    public var responseModifier: ResponseModifier?
    /// Runs on every body before it is returned; default `nil`.
    public var dataTransformer: DataTransformer?
    /// The most bytes of cut-short downloads the downloader keeps in memory to resume them; default
    /// 32 MiB; 0 turns resuming off.
    ///
    /// A download that fails after receiving part of a `200` body (cut short, timed out, connection
    /// lost, cancelled) keeps those bytes, by URL, when the response sent `Accept-Ranges: bytes`, no
    /// content coding, and a strong `ETag` (a weak `W/` one does not count) or a `Last-Modified` date.
    /// The next request for the URL — a retry of ``WebImageManager``'s ``RetryPolicy`` or any later
    /// load — asks for the rest with `Range: bytes=N-` and `If-Range`, and the caller gets the whole
    /// body. Past the limit the least recently kept partials are dropped first; a partial larger than
    /// the whole limit is not kept. Lowering the limit with ``Downloader/updateConfig(_:)`` drops the
    /// partials that no longer fit.
    public var maxResumableDataBytes: Int
    /// Which addresses downloads may connect to, checked on the resolved addresses of every request
    /// and redirect; default ``SourceAddressPolicy/standard`` (no link-local or unspecified
    /// destination: the cloud metadata service stays out of reach). A server fetching URLs its
    /// users type sets ``SourceAddressPolicy/publicOnly``.
    public var sourceAddressPolicy: SourceAddressPolicy

    /// Which client carries the downloads; default ``Transport/default``.
    public var transport: Transport

    /// The longest a connection may take to be made (name lookup, TCP and TLS handshakes), per
    /// address tried; default 10 seconds. Within ``downloadTimeout``.
    public var connectTimeout: Duration

    /// The proxies downloads go through; default ``ProxySettings/environment`` (`HTTP_PROXY`,
    /// `HTTPS_PROXY`, `NO_PROXY`). Only the libcurl transport uses it (URLSession on Linux reads the
    /// environment itself, lowercase names only).
    public var proxy: ProxySettings

    /// A PEM file of the certificate authorities trusted for `https://` sources instead of the
    /// system's (an internal origin's private CA); default `nil`: the system's store. libcurl
    /// transport only.
    public var certificateAuthorityFile: String?

    /// A folder of PEM certificate authorities (hashed names, as `openssl rehash` makes) trusted for
    /// `https://` sources instead of the system's; default `nil`. libcurl transport only.
    public var certificateAuthorityDirectory: String?

    /// The HTTP client of a download.
    public enum Transport: Sendable, Equatable {
        /// libcurl's multi interface, on one thread of its own (``CurlEngine``), for `http://` and
        /// `https://` alike, HTTP/2 where the origin offers it; requests that handle cookies go
        /// through URLSession (its shared cookie storage).
        case curl
        /// Every download through Foundation's URLSession (libcurl underneath too, with
        /// URLSession's thread hops and without the proxy, CA and content-coding settings here).
        case urlSession

        /// ``curl``, unless the environment variable `WEBIMAGE_DOWNLOAD_TRANSPORT` is `urlsession`
        /// (read once): a switch for operators, and how CI runs the download tests over URLSession too.
        public static let `default`: Transport =
            ProcessInfo.processInfo.environment["WEBIMAGE_DOWNLOAD_TRANSPORT"]?.lowercased() == "urlsession" ? .urlSession : .curl
    }

    /// The `User-Agent` WebImage sends by default.
    public static let defaultUserAgent = "WebImage/0.1 (Swift; Linux)"

    /// Creates a configuration; every parameter defaults to the property's documented default.
    public init(
        maxConcurrentDownloads: Int = 6, maxConcurrentDownloadsPerHost: Int? = nil, executionOrder: DownloadExecutionOrder = .fifo,
        downloadTimeout: Duration = .seconds(15), idleTimeout: Duration = .seconds(15),
        httpHeaders: [String: String] = ["Accept": "image/*,*/*;q=0.8", "User-Agent": DownloaderConfig.defaultUserAgent],
        basicAuthentication: (username: String, password: String)? = nil, credential: URLCredential? = nil, maxRedirects: Int = 10,
        acceptableStatusCodes: Set<Int> = Set(200..<300), acceptableContentTypes: Set<String>? = nil,
        maxResponseBytes: Int = 64 << 20, requestModifier: RequestModifier? = nil, responseModifier: ResponseModifier? = nil,
        dataTransformer: DataTransformer? = nil, maxResumableDataBytes: Int = 32 << 20,
        sourceAddressPolicy: SourceAddressPolicy = .standard, transport: Transport = .default,
        connectTimeout: Duration = .seconds(10), proxy: ProxySettings = .environment,
        certificateAuthorityFile: String? = nil, certificateAuthorityDirectory: String? = nil
    ) {
        self.maxConcurrentDownloads = maxConcurrentDownloads
        self.maxConcurrentDownloadsPerHost = maxConcurrentDownloadsPerHost
        self.executionOrder = executionOrder
        self.downloadTimeout = downloadTimeout
        self.idleTimeout = idleTimeout
        self.httpHeaders = httpHeaders
        self.basicAuthentication = basicAuthentication
        self.credential = credential
        self.maxRedirects = maxRedirects
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
        self.maxResponseBytes = maxResponseBytes
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.dataTransformer = dataTransformer
        self.maxResumableDataBytes = maxResumableDataBytes
        self.sourceAddressPolicy = sourceAddressPolicy
        self.transport = transport
        self.connectTimeout = connectTimeout
        self.proxy = proxy
        self.certificateAuthorityFile = certificateAuthorityFile
        self.certificateAuthorityDirectory = certificateAuthorityDirectory
    }

    /// The `Authorization` header value for ``credential`` or ``basicAuthentication``, if either is set.
    var authorizationHeader: String? {
        let pair: (String, String)?
        if let credential, let user = credential.user, let password = credential.password {
            pair = (user, password)
        } else {
            pair = basicAuthentication
        }
        guard let (user, password) = pair else { return nil }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// Whether `contentType` (a header value, parameters allowed) is accepted.
    func accepts(contentType: String?) -> Bool {
        guard let acceptable = acceptableContentTypes else { return true }
        guard let contentType else { return false }
        let mime = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if acceptable.contains(mime) { return true }
        let family = mime.split(separator: "/").first.map { "\($0)/*" } ?? ""
        return acceptable.contains(family)
    }
}
