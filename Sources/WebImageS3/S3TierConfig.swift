import Foundation

/// Where a fleet's durable tier lives in an S3-compatible store and how long its entries last.
public struct S3TierConfig: Sendable {
    /// The store (endpoint, region, credentials, time-outs, retries, breaker).
    public var client: S3ClientConfig
    /// The bucket; it must exist (``S3Client/createBucket(_:)`` makes one).
    public var bucket: String
    /// Keys are `webimage/v1/<namespace>/<md5 of the cache key>`: processes that share a namespace
    /// share entries; default `default`. Letters, digits, `-`, `_` and `.` only.
    public var namespace: String
    /// How long an entry lives after it is written; default 7 days (``ImageCacheConfig``'s disk age).
    /// An older entry is neither served (its `x-amz-meta-webimage-expires` is checked on every hit,
    /// and it is deleted then) nor kept: ``S3Tier/removeExpired()`` (run by
    /// ``S3ImageCache/run()``) deletes what nobody asked for, and a bucket lifecycle rule on the
    /// `webimage/v1/` prefix can do the same (README).
    public var entryLifetime: Duration
    /// How often ``S3ImageCache/run()`` sweeps expired entries; default 1 hour; `nil`: never.
    public var sweepInterval: Duration?

    /// Errors in a configuration, found where it is built.
    public struct Invalid: Error, CustomStringConvertible, Equatable {
        /// What is wrong.
        public var description: String
    }

    /// Creates a configuration; the defaults are as each property says.
    /// - Throws: ``Invalid`` for an empty bucket, a namespace with other characters than letters,
    ///   digits, `-`, `_` and `.`, or a lifetime or interval that is not positive.
    public init(client: S3ClientConfig, bucket: String, namespace: String = "default", entryLifetime: Duration = .seconds(7 * 24 * 3600),
                sweepInterval: Duration? = .seconds(3600)) throws(Invalid) {
        guard !bucket.isEmpty, !bucket.contains("/") else { throw Invalid(description: "the bucket name '\(bucket)' is empty or has a '/'") }
        guard !namespace.isEmpty, namespace.unicodeScalars.allSatisfy({ CharacterSet.alphanumerics.contains($0) || "-_.".unicodeScalars.contains($0) }),
              namespace.allSatisfy(\.isASCII) else {
            throw Invalid(description: "the namespace '\(namespace)' may hold only letters, digits, '-', '_' and '.'")
        }
        guard entryLifetime > .zero, (sweepInterval ?? .seconds(1)) > .zero else {
            throw Invalid(description: "the entry lifetime and the sweep interval must be positive")
        }
        self.client = client
        self.bucket = bucket
        self.namespace = namespace
        self.entryLifetime = entryLifetime
        self.sweepInterval = sweepInterval
    }

    /// The prefix every key of this namespace starts with (what a lifecycle rule or a listing names).
    public var prefix: String { "webimage/v1/\(namespace)/" }
}
