/// Counters of a ``RedisTier`` since it was created.
public struct RedisTierStatistics: Sendable, Hashable {
    /// Reads that found a valid entry.
    public var hits = 0
    /// Reads that found nothing (or an entry that had expired).
    public var misses = 0
    /// Entries written.
    public var stores = 0
    /// Entries not written because they were larger than ``RedisTierConfig/maxValueBytes``.
    public var oversizeSkipped = 0
    /// Values that did not parse (corrupt, foreign, another version) and were deleted.
    public var corruptRemoved = 0
    /// Commands that failed: timeouts, lost connections, error replies, skipped nodes. Each is a miss
    /// or a write left local, never an error for a load.
    public var errors = 0
    /// Commands not sent because their node's circuit breaker was open, its queue was full, or the
    /// tier was closed (counted in ``errors`` too).
    public var skippedWhileOpen = 0
    /// Times a node's circuit breaker opened.
    public var breakerOpenings = 0
    /// Fills this process claimed (it fetched from the origin while others waited).
    public var fillsClaimed = 0
    /// Loads that waited for another process's fill and read its result instead of the origin.
    public var fillsJoined = 0
    /// Loads that waited for another process's fill until ``RedisTierConfig/maxFillWait`` and then
    /// fetched themselves.
    public var fillWaitsTimedOut = 0
    /// Time spent in Redis commands (waiting for replies and connections), in total.
    public var timeSpent: Duration = .zero

    /// Creates zeroed counters.
    public init() {}
}
