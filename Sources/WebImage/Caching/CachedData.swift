import Foundation

/// Encoded bytes a cache holds under a key, with their metadata: what a byte-level read
/// (``ImageCaching/cachedData(forKey:)``) returns without decoding anything.
public struct CachedData: Sendable {
    /// The stored bytes.
    public var data: Data
    /// What was stored with them (validators, an encoded variant's ETag and size), if anything.
    public var metadata: DiskCacheMetadata?
    /// Whether the bytes came from a tier shared between processes (a ``LayeredImageCaching``'s
    /// Redis, say) rather than this process's own disk.
    public var isFromSharedTier: Bool

    /// Creates a byte-level hit.
    /// - Parameter isFromSharedTier: default `false`: from this process's own tiers.
    public init(data: Data, metadata: DiskCacheMetadata? = nil, isFromSharedTier: Bool = false) {
        self.data = data
        self.metadata = metadata
        self.isFromSharedTier = isFromSharedTier
    }
}
