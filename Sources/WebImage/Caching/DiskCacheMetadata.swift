import Foundation

/// What is stored with a disk-cache entry besides its bytes: the HTTP validators the downloader
/// revalidates with, and any data a user attaches (SDWebImage's extended data).
///
/// Kept in an extended attribute of the cache file (set on the temporary file before the rename, so
/// bytes and metadata appear together), or in a hidden sidecar file where the file system has no
/// extended attributes.
public struct DiskCacheMetadata: Sendable, Hashable, Codable {
    /// The response's `ETag`, for `If-None-Match`.
    public var entityTag: String?
    /// The response's `Last-Modified`, for `If-Modified-Since`.
    public var lastModified: String?
    /// The response's `Cache-Control: max-age`, in seconds.
    public var maxAge: Int?
    /// Any bytes a user attaches to the entry (at most 64 KiB with extended attributes).
    public var extendedData: Data?

    /// Creates metadata; every field defaults to `nil`.
    public init(entityTag: String? = nil, lastModified: String? = nil, maxAge: Int? = nil, extendedData: Data? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.extendedData = extendedData
    }
}

/// What a disk sweep did.
public struct DiskCacheSweepReport: Sendable, Hashable {
    /// Entries removed because they were older than the maximum age.
    public var expiredCount: Int
    /// Entries removed to get under the size limit.
    public var evictedCount: Int
    /// Bytes (allocated on disk) freed by both passes.
    public var removedBytes: Int
    /// Entries left.
    public var remainingCount: Int
    /// Bytes (allocated on disk) left.
    public var remainingBytes: Int

    /// Entries removed by both passes.
    public var removedCount: Int { expiredCount + evictedCount }
}
