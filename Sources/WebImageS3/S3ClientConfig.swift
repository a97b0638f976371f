import Foundation

/// Where an S3-compatible store is and how it is reached: endpoint, region, addressing, credentials,
/// time-outs, retries and the breaker. Checked where it is built (``init(region:endpoint:addressing:credentials:timeout:retries:retryBaseDelay:breakerThreshold:breakerCooldown:)``).
public struct S3ClientConfig: Sendable {
    /// How a bucket is named in a request's URL.
    public enum Addressing: String, Sendable, Hashable {
        /// `https://endpoint/bucket/key`: what MinIO, Ceph RGW and most S3-compatible stores expect.
        case pathStyle
        /// `https://bucket.endpoint/key`: AWS's default (bucket names with dots need path style over TLS).
        case virtualHosted
    }

    /// How requests travel.
    public enum Transport: String, Sendable, Hashable {
        /// libcurl, through WebImage's transfer thread (`http://` and `https://`, HTTP/2 where the
        /// store offers it; no hand-offs between URLSession's threads and queues: `bench s3`).
        case curl
        /// URLSession for every endpoint.
        case urlSession
    }

    /// The signing region, such as `us-east-1` (`AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`).
    public var region: String
    /// The store's base URL (`http://127.0.0.1:9000` for MinIO); `nil` for AWS itself
    /// (`https://s3.<region>.amazonaws.com`).
    public var endpoint: URL?
    /// Path style or virtual-hosted; default path style for a custom endpoint, virtual-hosted for AWS.
    public var addressing: Addressing
    /// The signing keys; default the environment's (``S3Credentials/fromEnvironment(_:)``); `nil`
    /// sends unsigned requests (public buckets).
    public var credentials: S3Credentials?
    /// The longest one attempt may take, connection and body included; default 2 s.
    public var timeout: Duration
    /// Attempts after the first for a time-out, a connection failure, a 5xx or a 503 SlowDown;
    /// default 2. Other answers (403, 404) are never retried.
    public var retries: Int
    /// The first retry's delay; each later one doubles it, and each is jittered to 50–150 %;
    /// default 50 ms.
    public var retryBaseDelay: Duration
    /// Failed calls in a row (after their retries) that open the breaker; default 3.
    public var breakerThreshold: Int
    /// How long an open breaker skips the store before one probe goes through; default 5 s.
    public var breakerCooldown: Duration
    /// How requests travel; default ``Transport/curl``.
    public var transport: Transport = .curl

    /// Errors in a configuration, found where it is built.
    public struct Invalid: Error, CustomStringConvertible, Equatable {
        /// What is wrong.
        public var description: String
    }

    /// Creates a configuration; every parameter defaults as its property says.
    /// - Throws: ``Invalid`` for an empty region, an endpoint that is not `http` or `https` with a
    ///   host, a negative retry count, or a time-out, delay or cooldown that is not positive.
    public init(region: String? = nil, endpoint: URL? = nil, addressing: Addressing? = nil,
                credentials: S3Credentials? = S3Credentials.fromEnvironment(), timeout: Duration = .seconds(2), retries: Int = 2,
                retryBaseDelay: Duration = .milliseconds(50), breakerThreshold: Int = 3, breakerCooldown: Duration = .seconds(5)) throws(Invalid) {
        let environment = ProcessInfo.processInfo.environment
        let region = region ?? environment["AWS_REGION"] ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        guard !region.isEmpty, region.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw Invalid(description: "the region '\(region)' is not a region name")
        }
        if let endpoint {
            guard ["http", "https"].contains(endpoint.scheme?.lowercased() ?? ""), let host = endpoint.host, !host.isEmpty else {
                throw Invalid(description: "the endpoint \(endpoint.absoluteString) is not an http or https URL with a host")
            }
        }
        guard retries >= 0 else { throw Invalid(description: "retries cannot be negative") }
        guard timeout > .zero, retryBaseDelay > .zero, breakerCooldown > .zero, breakerThreshold > 0 else {
            throw Invalid(description: "time-outs, delays, the cooldown and the breaker threshold must be positive")
        }
        self.region = region
        self.endpoint = endpoint
        self.addressing = addressing ?? (endpoint == nil ? .virtualHosted : .pathStyle)
        self.credentials = credentials
        self.timeout = timeout
        self.retries = retries
        self.retryBaseDelay = retryBaseDelay
        self.breakerThreshold = breakerThreshold
        self.breakerCooldown = breakerCooldown
    }

    /// The URL of `key` in `bucket` (each path segment percent-encoded once, as SigV4 signs it for S3).
    func url(bucket: String, key: String, query: [(String, String)] = []) -> URL {
        let base = endpoint ?? URL(string: "https://s3.\(region).amazonaws.com")!
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        let encodedKey = key.split(separator: "/", omittingEmptySubsequences: false).map { SignatureV4.encode(String($0)) }.joined(separator: "/")
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/") { basePath.removeLast() }
        switch addressing {
        case .pathStyle:
            components.percentEncodedPath = basePath + "/" + SignatureV4.encode(bucket) + (key.isEmpty ? "" : "/" + encodedKey)
        case .virtualHosted:
            components.host = bucket + "." + (components.host ?? "")
            components.percentEncodedPath = basePath + "/" + encodedKey
        }
        components.percentEncodedQuery = query.isEmpty ? nil
            : query.map { SignatureV4.encode($0.0) + "=" + SignatureV4.encode($0.1) }.joined(separator: "&")
        return components.url!
    }
}
