/// What an ``S3Tier`` did since it was made.
public struct S3TierStatistics: Sendable, Hashable {
    /// Reads answered from the store.
    public var hits = 0
    /// Reads of keys the store does not have.
    public var misses = 0
    /// Reads of entries past their lifetime (deleted, answered as misses).
    public var expiredHits = 0
    /// Entries written.
    public var stores = 0
    /// Calls that failed (after retries), skipped by the breaker, or brought damaged bodies.
    public var errors = 0
    /// Entries deleted by sweeps and clears.
    public var removed = 0
    /// How many times the breaker opened.
    public var breakerOpenings = 0
    /// Whether the breaker skips the store now.
    public var isSkippingStore = false

    /// All zero.
    public init() {}
}
