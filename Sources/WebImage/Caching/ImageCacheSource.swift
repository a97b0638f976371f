/// Which cache tier stored bytes, or an image decoded from them, came from. A tier shared between
/// processes is named, so a hit from Redis and one from an object store behind it tell apart.
public enum ImageCacheSource: Sendable, Hashable {
    /// This process's memory tier.
    case memory
    /// This process's own disk tier.
    case disk
    /// A tier shared between processes (a ``SharedCacheTier``), by its report name (``SharedTierReport/name``:
    /// `"redis"`, `"s3"`).
    case sharedTier(String)

    /// Whether the bytes came from a tier shared between processes.
    public var isSharedTier: Bool {
        if case .sharedTier = self { return true }
        return false
    }

    /// The shared tier's name for a ``sharedTier(_:)`` source; `nil` otherwise.
    public var sharedTierName: String? {
        if case .sharedTier(let name) = self { return name }
        return nil
    }

    /// The ``ImageCacheType`` this source belongs to: ``ImageCacheType/memory`` for ``memory``,
    /// ``ImageCacheType/disk`` for the others (a shared tier stands behind the disk tier).
    public var cacheType: ImageCacheType { self == .memory ? .memory : .disk }

    /// What the deprecated `isFromSharedTier: Bool` properties stood for: a shared tier whose name
    /// nobody gave, or this process's disk.
    static func legacy(isFromSharedTier: Bool) -> ImageCacheSource {
        isFromSharedTier ? .sharedTier("shared") : .disk
    }

    /// The source after a deprecated `isFromSharedTier = flag` on a value from `current` of `cacheType`:
    /// a shared tier kept (or an unnamed one), else the local tier `cacheType` names (`nil` for none).
    static func settingLegacyFlag(_ flag: Bool, on current: ImageCacheSource?, cacheType: ImageCacheType) -> ImageCacheSource? {
        if flag { return current?.isSharedTier == true ? current : .legacy(isFromSharedTier: true) }
        return cacheType == .memory ? .memory : cacheType == .none ? nil : .disk
    }
}
