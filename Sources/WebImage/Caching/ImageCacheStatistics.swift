import Synchronization

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

/// The counters behind ``ImageCacheStatistics``: behind one short lock, except memory hits, which
/// are the hot path and count on an atomic.
final class ImageCacheCounters: Sendable {
    private let values = Mutex(ImageCacheStatistics())
    private let memoryHits = Atomic<Int>(0)

    func add(_ counter: WritableKeyPath<ImageCacheStatistics, Int>, _ amount: Int = 1) {
        values.withLock { $0[keyPath: counter] += amount }
    }

    /// Counts one memory hit.
    func addMemoryHit() {
        memoryHits.add(1, ordering: .relaxed)
    }

    var snapshot: ImageCacheStatistics {
        var snapshot = values.withLock { $0 }
        snapshot.memoryHits += memoryHits.load(ordering: .relaxed)
        return snapshot
    }
}
