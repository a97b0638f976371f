import Foundation

/// Which tiers of a cache an operation touches, or where a result came from (SDWebImage's `SDImageCacheType`).
public enum ImageCacheType: Sendable, Hashable {
    /// No tier: not cached, or fetched from the network.
    case none
    /// The in-memory tier only.
    case memory
    /// The on-disk tier only.
    case disk
    /// Both tiers.
    case all

    /// Whether this value includes the memory tier.
    public var includesMemory: Bool { self == .memory || self == .all }
    /// Whether this value includes the disk tier.
    public var includesDisk: Bool { self == .disk || self == .all }
}
