import Foundation

/// A store of encoded bytes shared by several processes behind each process's own cache: a fleet's
/// Redis, a durable object store. One conformance is all a new shared tier needs;
/// ``LayeredImageCache`` puts it behind a cache with the query, promote, decode-fallback, store and
/// flush logic written once.
///
/// Every method fails soft: a down or slow tier is a miss or a write left local, never an error.
public protocol SharedCacheTier: Sendable {
    /// The tier's report (its `name` is the metrics' `tier` label, such as `redis` or `s3`), now.
    var report: SharedTierReport { get }

    /// Whether stores reach it in the background (``LayeredImageCache/flush()`` waits for them):
    /// `true` for a tier whose write is slow (an object store's PUT); `false` when a store is awaited
    /// (a Redis `SET`). Default `false`.
    var writesInBackground: Bool { get }

    /// Whether it coordinates fills across processes (``beginFill(forKey:)``); default `false`: the
    /// fleet's single flight is the inner cache's.
    var coordinatesFills: Bool { get }

    /// The entry under `key`, or `nil` (a miss, an expired entry, any failure).
    func value(forKey key: String) async -> CachedData?

    /// Stores `data` under `key` (ending this process's fill claim on it); `false` when it was not written.
    @discardableResult
    func setValue(_ data: Data, metadata: DiskCacheMetadata?, forKey key: String) async -> Bool

    /// Deletes the entry under `key`.
    func removeValue(forKey key: String) async

    /// Whether an entry exists under `key` (`false` on failure).
    func containsValue(forKey key: String) async -> Bool

    /// Deletes every entry of its namespace; returns how many when it can tell (else 0).
    @discardableResult
    func removeAll() async -> Int

    /// With ``coordinatesFills``: claims `key` for this process (`nil`: fetch it; the store ends the
    /// claim), or waits for the process holding the claim and returns its bytes. Default `nil`.
    func beginFill(forKey key: String) async -> CachedData?

    /// Ends this process's claim on `key`. Default: nothing.
    func endFill(forKey key: String) async

    /// Runs the tier's background work (sweeps) until the calling task is cancelled. Default: waits.
    func run() async

    /// Closes its connections for good (later calls miss). Default: nothing.
    func close()
}

extension SharedCacheTier {
    /// Stores are awaited.
    public var writesInBackground: Bool { false }
    /// No claims: the inner cache's single flight serves.
    public var coordinatesFills: Bool { false }
    /// No claim support: never waits.
    public func beginFill(forKey key: String) async -> CachedData? { nil }
    /// No claims to end.
    public func endFill(forKey key: String) async {}
    /// Nothing in the background: waits for cancellation.
    public func run() async { await waitForCancellation() }
    /// Nothing to close.
    public func close() {}
}
