import Foundation

/// Encoded bytes a cache holds under a key, with their metadata: what a byte-level read
/// (``ImageCaching/cachedData(forKey:)``) returns without decoding anything.
public struct CachedData: Sendable {
    /// The stored bytes.
    public var data: Data
    /// What was stored with them (validators, an encoded variant's ETag and size), if anything.
    public var metadata: DiskCacheMetadata?

    /// Creates a byte-level hit.
    public init(data: Data, metadata: DiskCacheMetadata? = nil) {
        self.data = data
        self.metadata = metadata
    }
}
