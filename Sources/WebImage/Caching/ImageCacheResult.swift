import Foundation

/// A cache hit.
public struct ImageCacheResult: Sendable {
    /// The decoded image.
    public var image: Image
    /// The stored bytes, when the disk tier was read (always for a disk hit, for a memory hit only with
    /// ``ImageCacheQuery/includesData``).
    public var data: Data?
    /// The tier that had the image: ``ImageCacheType/memory`` or ``ImageCacheType/disk``.
    public var cacheType: ImageCacheType
    /// The metadata stored with the disk entry (HTTP validators, extended data), when read from disk.
    public var metadata: DiskCacheMetadata?
    /// Whether a disk hit's bytes came from a tier shared between processes (a
    /// ``LayeredImageCaching``'s Redis, say) rather than this process's own disk.
    public var isFromSharedTier: Bool

    /// Creates a result.
    /// - Parameter isFromSharedTier: default `false`: from this process's own tiers.
    public init(image: Image, data: Data?, cacheType: ImageCacheType, metadata: DiskCacheMetadata? = nil, isFromSharedTier: Bool = false) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.metadata = metadata
        self.isFromSharedTier = isFromSharedTier
    }
}
