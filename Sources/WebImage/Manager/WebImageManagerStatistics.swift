/// Counters of a ``WebImageManager`` since it was created.
public struct WebImageManagerStatistics: Sendable, Hashable {
    /// Calls to ``WebImageManager/loadImage(url:options:context:)`` and
    /// ``WebImageManager/imageEvents(url:options:context:)``.
    public var loads = 0
    /// Loads answered from the memory tier.
    public var memoryHits = 0
    /// Loads answered from the disk tier.
    public var diskHits = 0
    /// Thumbnail or transformed loads derived from a cached original without the network.
    public var derivedFromOriginal = 0
    /// Downloads the manager asked its loader for (retries count again).
    public var downloads = 0
    /// Loads that joined another load of the same key already under way.
    public var joins = 0
    /// Loads, variants and image facts answered by another process's fetch through a shared cache tier
    /// (``ImageCaching/beginFill(forKey:)``) instead of the loader or an encode.
    public var sharedFills = 0
    /// Revalidations answered with 304 Not Modified.
    public var notModified = 0
    /// Loads that ended in an error (cancellations included).
    public var failures = 0
    /// Images decoded by loads: downloaded bytes, and disk hits (which decode).
    public var decodes = 0
    /// Variants encoded (``WebImageManager/loadVariant(url:format:encoding:options:context:)``); one
    /// for all concurrent callers of the same variant.
    public var encodes = 0
    /// Variants answered from the memory tier of encoded bytes.
    public var variantMemoryHits = 0
    /// Variants answered from the cache's stored bytes (disk), without decoding.
    public var variantDiskHits = 0

    /// Creates zeroed counters.
    public init() {}
}

extension StatisticsCounters where Statistics == WebImageManagerStatistics {
    /// A ``WebImageManager``'s counters. The hot paths count on lanes: lane 0 is a load answered from
    /// memory (a load and a memory hit), lane 1 a variant answered from the memory tier of encoded bytes
    /// (counted on a server's network thread, which must not wait for a lock cold work holds).
    static func manager() -> StatisticsCounters<WebImageManagerStatistics> {
        StatisticsCounters(WebImageManagerStatistics(), lanes: 2) { statistics, lane, count in
            if lane == 0 {
                statistics.loads += count
                statistics.memoryHits += count
            } else {
                statistics.variantMemoryHits += count
            }
        }
    }

    /// Counts a load answered from memory as a load and a memory hit, with one atomic add.
    func addMemoryHitLoad() { addToLane(0) }

    /// Counts a variant answered from the memory tier of encoded bytes, with one atomic add.
    func addVariantMemoryHit() { addToLane(1) }
}
