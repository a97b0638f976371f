/// What a cache tier shared between processes (Redis) has done since it was created, for an image
/// server's `/metrics`: the shape every shared tier can fill, so a server need not know which one it runs on.
public struct SharedTierReport: Sendable, Hashable {
    /// The kind of store, for the metrics' `tier` label (`"redis"`).
    public var name: String
    /// Reads that found a valid entry.
    public var hits = 0
    /// Reads that found nothing.
    public var misses = 0
    /// Commands that failed (each a miss or a write left local, never a failed load).
    public var errors = 0
    /// Nodes of the store.
    public var nodes = 0
    /// Nodes skipped now because their circuit breaker is open.
    public var openBreakers = 0
    /// Times a breaker opened.
    public var breakerOpenings = 0
    /// Fills this process claimed for the fleet (it fetched from the origin while others waited).
    public var fillsClaimed = 0
    /// Loads that waited for another process's fill and read its result instead of the origin.
    public var fillsJoined = 0
    /// Waits for another process's fill that timed out (the load then fetched itself).
    public var fillWaitsTimedOut = 0

    /// Creates a report with every counter at 0.
    public init(name: String) {
        self.name = name
    }
}

/// A cache that has a tier shared between processes and reports on it (``RedisImageCache`` in
/// `WebImageRedis`, `S3ImageCache` in `WebImageS3`); an ``ImageCaching`` an image server can put in
/// its `/metrics`.
public protocol SharedTierReporting: Sendable {
    /// The shared tier's counters and state now.
    var sharedTierReport: SharedTierReport { get }
    /// Every shared tier's report, nearest first, when tiers are layered (Redis in front of an
    /// object store); default ``sharedTierReport`` alone.
    var sharedTierReports: [SharedTierReport] { get }
}

extension SharedTierReporting {
    /// ``sharedTierReport`` alone: a cache with one shared tier.
    public var sharedTierReports: [SharedTierReport] { [sharedTierReport] }
}
