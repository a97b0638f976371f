import Foundation

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
