import Synchronization

/// The counters behind every statistics value of the package (a cache's, the manager's, a shared
/// tier's): one type, generic over the public value it snapshots.
///
/// Counts go to the value behind one short lock, except on fast lanes: a hot path (a memory hit,
/// counted on a server's network thread, which must not wait for a lock cold work holds) adds to an
/// atomic lane instead, and ``snapshot`` folds each lane into the fields it stands for.
package final class StatisticsCounters<Statistics: Sendable>: Sendable {
    private let values: Mutex<Statistics>
    private let lanes: AtomicCounters
    private let fold: @Sendable (inout Statistics, _ lane: Int, _ count: Int) -> Void

    /// Counters starting at `zero`, with `lanes` atomic lanes that `fold` adds into a snapshot
    /// (called once per lane with the lane's count).
    package init(_ zero: Statistics, lanes: Int = 0,
                 fold: @escaping @Sendable (inout Statistics, _ lane: Int, _ count: Int) -> Void = { _, _, _ in }) {
        values = Mutex(zero)
        self.lanes = AtomicCounters(count: lanes)
        self.fold = fold
    }

    /// Adds `amount` to `field`, under the lock.
    package func add(_ field: WritableKeyPath<Statistics, Int>, _ amount: Int = 1) {
        values.withLock { $0[keyPath: field] += amount }
    }

    /// Changes several fields at once (or one that is not an `Int`), under the lock.
    package func update(_ body: (inout Statistics) -> Void) {
        values.withLock { body(&$0) }
    }

    /// Adds `amount` to fast lane `lane`, with one relaxed atomic add and no lock.
    package func addToLane(_ lane: Int, _ amount: Int = 1) {
        lanes.add(amount, at: lane)
    }

    /// The counts now: the locked value with every lane folded in.
    package var snapshot: Statistics {
        var snapshot = values.withLock { $0 }
        for lane in 0..<lanes.count { fold(&snapshot, lane, lanes.value(at: lane)) }
        return snapshot
    }
}
