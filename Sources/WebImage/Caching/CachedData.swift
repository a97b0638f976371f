import Foundation

/// Encoded bytes a cache holds under a key, with their metadata: what a byte-level read
/// (``ImageCaching/cachedData(forKey:)``) returns without decoding anything.
public struct CachedData: Sendable {
    /// The stored bytes.
    public var data: Data
    /// What was stored with them (validators, an encoded variant's ETag and size), if anything.
    public var metadata: DiskCacheMetadata?
    /// The tier the bytes came from: this process's disk (the default), or a tier shared between
    /// processes, named (a ``LayeredImageCache``'s Redis, say).
    public var source: ImageCacheSource

    /// Creates a byte-level hit.
    /// - Parameter source: default ``ImageCacheSource/disk``: from this process's own disk.
    public init(data: Data, metadata: DiskCacheMetadata? = nil, source: ImageCacheSource = .disk) {
        self.data = data
        self.metadata = metadata
        self.source = source
    }

    /// Creates a byte-level hit from a shared tier with no name, or from this process's disk.
    @available(*, deprecated, renamed: "init(data:metadata:source:)", message: "name the tier: source: .sharedTier(name)")
    public init(data: Data, metadata: DiskCacheMetadata? = nil, isFromSharedTier: Bool) {
        self.init(data: data, metadata: metadata, source: .legacy(isFromSharedTier: isFromSharedTier))
    }

    /// Whether the bytes came from a tier shared between processes.
    @available(*, deprecated, message: "use source (source.isSharedTier), which names the tier")
    public var isFromSharedTier: Bool {
        get { source.isSharedTier }
        set { source = .settingLegacyFlag(newValue, on: source, cacheType: .disk) ?? .disk }
    }
}
