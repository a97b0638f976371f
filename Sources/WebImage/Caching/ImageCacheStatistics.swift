/// Counters of an ``ImageCache`` since it was created.
public struct ImageCacheStatistics: Sendable, Hashable {
    /// Queries answered from memory.
    public var memoryHits = 0
    /// Queries answered from disk (including decoding).
    public var diskHits = 0
    /// Queries that found nothing.
    public var misses = 0
    /// Entries the memory tier's limits evicted.
    public var memoryEvictions = 0
    /// Bytes written to the disk tier.
    public var bytesWritten = 0
    /// Disk files that could not be decoded, removed and treated as misses.
    public var corruptFilesRemoved = 0

    /// Creates zeroed counters.
    public init() {}
}

extension StatisticsCounters where Statistics == ImageCacheStatistics {
    /// An ``ImageCache``'s counters: memory hits, the hot path, count on lane 0.
    static func imageCache() -> StatisticsCounters<ImageCacheStatistics> {
        StatisticsCounters(ImageCacheStatistics(), lanes: 1) { statistics, _, count in statistics.memoryHits += count }
    }

    /// Counts one memory hit, with one atomic add.
    func addMemoryHit() { addToLane(0) }
}
