import Foundation

/// How urgently a load should start when downloads queue up.
public enum DownloadPriority: Int, Sendable, Hashable, Comparable {
    /// Starts after every normal and high request (SDWebImage's `lowPriority`).
    case low = 0
    /// The default.
    case normal = 1
    /// Starts before every normal and low request (SDWebImage's `highPriority`).
    case high = 2

    /// Orders by urgency: `low < normal < high`.
    public static func < (lhs: DownloadPriority, rhs: DownloadPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The HTTP validators of a cached copy, for a conditional request.
public struct HTTPValidators: Sendable, Hashable {
    /// The cached response's `ETag`, sent as `If-None-Match`.
    public var entityTag: String?
    /// The cached response's `Last-Modified`, sent as `If-Modified-Since`.
    public var lastModified: String?

    /// Creates validators; both default to `nil`.
    public init(entityTag: String? = nil, lastModified: String? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
    }

    /// Whether there is anything to validate with.
    public var isEmpty: Bool { entityTag == nil && lastModified == nil }
}

/// What to load and how.
public struct ImageLoadRequest: Sendable {
    /// The URL to fetch.
    public var url: URL
    /// Where the request goes in the download queue; default ``DownloadPriority/normal``.
    public var priority: DownloadPriority
    /// Extra header fields for this request (on top of ``DownloaderConfig/httpHeaders``); default none.
    public var headers: [String: String]
    /// Send cookies and store the ones the server sets; default `false`.
    public var handlesCookies: Bool
    /// Validators of a cached copy: when set, the request is conditional and a 304 throws
    /// ``WebImageError/notModified(url:)``; default `nil`.
    public var validators: HTTPValidators?
    /// Rewrites this request's `URLRequest` after the loader's own modifier (HTTP loaders only);
    /// default `nil`. A request with a modifier never shares a download with other callers.
    public var requestModifier: RequestModifier?
    /// Checks or rewrites this request's response after the loader's own modifier (HTTP loaders
    /// only); default `nil`. A request with a modifier never shares a download with other callers.
    public var responseModifier: ResponseModifier?

    /// Creates a request; every parameter but the URL defaults to the property's documented default.
    public init(url: URL, priority: DownloadPriority = .normal, headers: [String: String] = [:],
                handlesCookies: Bool = false, validators: HTTPValidators? = nil,
                requestModifier: RequestModifier? = nil, responseModifier: ResponseModifier? = nil) {
        self.url = url
        self.priority = priority
        self.headers = headers
        self.handlesCookies = handlesCookies
        self.validators = validators
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
    }
}

/// Timings and sizes of one download (Linux's URLSession never reports its own metrics).
public struct DownloadMetrics: Sendable, Hashable {
    /// Time spent waiting for a free download slot.
    public var queuedDuration: Duration = .zero
    /// Time from starting the request to its response headers.
    public var timeToResponse: Duration = .zero
    /// Time from starting the request to its last byte.
    public var transferDuration: Duration = .zero
    /// Body bytes received, the ones a resumed download took from its kept partial included.
    public var receivedBytes = 0
    /// The bytes at the start of the body that came from a partial kept when an earlier download of
    /// the URL was cut short (see ``DownloaderConfig/maxResumableDataBytes``); 0 when the whole body
    /// came with this transfer.
    public var resumedBytes = 0
    /// Redirects followed.
    public var redirectCount = 0

    /// Creates zeroed metrics.
    public init() {}
}

/// A completed load.
public struct ImageLoadResponse: Sendable {
    /// The body.
    public var data: Data
    /// The URL the body came from (after redirects).
    public var url: URL
    /// The HTTP status (200 for file and data URLs).
    public var statusCode: Int
    /// The `Content-Type` (or the type a data URL declares), if any.
    public var contentType: String?
    /// Response header fields, with lower-cased names.
    public var headers: [String: String]
    /// Timings and sizes.
    public var metrics: DownloadMetrics

    /// Creates a response.
    public init(data: Data, url: URL, statusCode: Int = 200, contentType: String? = nil, headers: [String: String] = [:],
                metrics: DownloadMetrics = DownloadMetrics()) {
        self.data = data
        self.url = url
        self.statusCode = statusCode
        self.contentType = contentType
        self.headers = headers
        self.metrics = metrics
    }

    /// The validators to store with the cached copy (`ETag`, `Last-Modified`).
    public var validators: HTTPValidators {
        HTTPValidators(entityTag: headers["etag"], lastModified: headers["last-modified"])
    }

    /// The `max-age` of `Cache-Control`, in seconds, if the server sent one.
    public var maxAge: Int? {
        guard let control = headers["cache-control"] else { return nil }
        for directive in control.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]) { return seconds }
        }
        return nil
    }
}

/// Bytes that have just arrived for a load in progress.
public struct ImageLoadProgress: Sendable {
    /// Body bytes received so far.
    public var receivedBytes: Int
    /// The body size the server announced, if it did.
    public var expectedBytes: Int?
    /// The bytes that arrived since the previous progress report (for incremental decoding). A caller
    /// that joins a download already under way first gets everything received so far in one chunk, and
    /// the first report of a resumed download carries the bytes kept from the earlier attempt too.
    public var chunk: Data

    /// Creates a progress report.
    public init(receivedBytes: Int, expectedBytes: Int?, chunk: Data) {
        self.receivedBytes = receivedBytes
        self.expectedBytes = expectedBytes
        self.chunk = chunk
    }
}

/// Called with each chunk of a load in progress, in order, on one thread at a time. It runs on the
/// loader's delivery thread: keep it short (a slow handler slows the download, it never makes the
/// loader buffer more).
public typealias ImageLoadProgressHandler = @Sendable (ImageLoadProgress) -> Void

/// Fetches the bytes of an image (SDWebImage's `SDImageLoader`): the ``Downloader`` over HTTP, the
/// ``FileLoader`` for `file:` and `data:` URLs, or your own (an S3 client, a database).
public protocol ImageLoader: Sendable {
    /// Whether this loader can fetch `url` (by its scheme, usually).
    func canLoad(_ url: URL) -> Bool

    /// Fetches `request.url`, reporting each chunk to `progress` as it arrives.
    /// - Returns: the whole body and the response's metadata.
    /// - Throws: ``WebImageError``; a cancelled caller gets ``WebImageError/cancelled(url:)`` at once.
    func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler?) async throws -> ImageLoadResponse
}
