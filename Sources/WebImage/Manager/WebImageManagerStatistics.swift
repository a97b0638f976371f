import Synchronization

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
    /// Revalidations answered with 304 Not Modified.
    public var notModified = 0
    /// Loads that ended in an error (cancellations included).
    public var failures = 0

    /// Creates zeroed counters.
    public init() {}
}

/// The counters behind ``WebImageManagerStatistics``, behind one short lock.
final class WebImageManagerCounters: Sendable {
    private let values = Mutex(WebImageManagerStatistics())

    func add(_ counter: WritableKeyPath<WebImageManagerStatistics, Int>, _ amount: Int = 1) {
        values.withLock { $0[keyPath: counter] += amount }
    }

    /// Counts a load answered from memory (one lock for both counters: the hot path).
    func addMemoryHitLoad() {
        values.withLock { values in
            values.loads += 1
            values.memoryHits += 1
        }
    }

    var snapshot: WebImageManagerStatistics { values.withLock { $0 } }
}
