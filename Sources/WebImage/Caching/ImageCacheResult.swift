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
    /// Where exactly the image came from: the memory tier, this process's disk, or a tier shared
    /// between processes, named (a ``LayeredImageCache``'s Redis, say).
    public var source: ImageCacheSource

    /// Creates a result.
    /// - Parameter source: default `nil`: this process's own tier `cacheType` names.
    public init(image: Image, data: Data?, cacheType: ImageCacheType, metadata: DiskCacheMetadata? = nil, source: ImageCacheSource? = nil) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.metadata = metadata
        self.source = source ?? (cacheType == .memory ? .memory : .disk)
    }

    /// Creates a result from a shared tier with no name, or from this process's own tiers.
    @available(*, deprecated, renamed: "init(image:data:cacheType:metadata:source:)", message: "name the tier: source: .sharedTier(name)")
    public init(image: Image, data: Data?, cacheType: ImageCacheType, metadata: DiskCacheMetadata? = nil, isFromSharedTier: Bool) {
        self.init(image: image, data: data, cacheType: cacheType, metadata: metadata,
                  source: isFromSharedTier ? .legacy(isFromSharedTier: true) : nil)
    }

    /// Whether a disk hit's bytes came from a tier shared between processes.
    @available(*, deprecated, message: "use source (source.isSharedTier), which names the tier")
    public var isFromSharedTier: Bool {
        get { source.isSharedTier }
        set { source = .settingLegacyFlag(newValue, on: source, cacheType: cacheType) ?? .disk }
    }
}
