import Foundation

/// What is stored with a disk-cache entry besides its bytes: the HTTP validators the downloader
/// revalidates with, any data a user attaches (SDWebImage's extended data), and for an encoded
/// variant its own `ETag` and pixel size (so a hit is served without decoding).
///
/// Kept in an extended attribute of the cache file (set on the temporary file before the rename, so
/// bytes and metadata appear together), or in a hidden sidecar file where the file system has no
/// extended attributes.
public struct DiskCacheMetadata: Sendable, Hashable, Codable {
    /// The response's `ETag`, for `If-None-Match`; for an encoded variant's entry, the variant's own
    /// strong `ETag` (``ImageVariant/entityTag``).
    public var entityTag: String?
    /// The response's `Last-Modified`, for `If-Modified-Since`.
    public var lastModified: String?
    /// The response's `Cache-Control: max-age`, in seconds.
    public var maxAge: Int?
    /// Any bytes a user attaches to the entry (at most 64 KiB with extended attributes).
    public var extendedData: Data?
    /// The pixel size of the encoded image an entry holds, when the writer knew it (encoded variants).
    public var pixelSize: PixelSize?

    /// Creates metadata; every field defaults to `nil`.
    public init(entityTag: String? = nil, lastModified: String? = nil, maxAge: Int? = nil, extendedData: Data? = nil,
                pixelSize: PixelSize? = nil) {
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.maxAge = maxAge
        self.extendedData = extendedData
        self.pixelSize = pixelSize
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
