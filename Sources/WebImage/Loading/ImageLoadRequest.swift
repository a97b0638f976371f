import Foundation

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
    /// The largest body this request accepts, within the loader's own limit; default `nil` (the
    /// loader's limit alone). Callers with different limits never share a download.
    public var maxResponseBytes: Int?

    /// Creates a request; every parameter but the URL defaults to the property's documented default.
    public init(url: URL, priority: DownloadPriority = .normal, headers: [String: String] = [:],
                handlesCookies: Bool = false, validators: HTTPValidators? = nil,
                requestModifier: RequestModifier? = nil, responseModifier: ResponseModifier? = nil, maxResponseBytes: Int? = nil) {
        self.url = url
        self.priority = priority
        self.headers = headers
        self.handlesCookies = handlesCookies
        self.validators = validators
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.maxResponseBytes = maxResponseBytes
    }
}
