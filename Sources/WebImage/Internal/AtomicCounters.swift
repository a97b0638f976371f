import Synchronization

/// A fixed number of integer counters, each added to and read atomically (relaxed), from any
/// thread, without a lock. `Atomic` cannot be an element of an `Array`, so they live in memory of
/// their own, initialised at zero and freed with the object.
package final class AtomicCounters: Sendable {
    /// `nonisolated(unsafe)`: the pointer is set once in `init` and never changes, and the memory it
    /// points to is only reached through `Atomic`'s own operations.
    private nonisolated(unsafe) let counters: UnsafeMutablePointer<Atomic<Int>>
    package let count: Int

    /// `count` counters, all zero.
    package init(count: Int) {
        self.count = max(1, count)
        counters = .allocate(capacity: self.count)
        for index in 0..<self.count { (counters + index).initialize(to: Atomic(0)) }
    }

    deinit {
        counters.deinitialize(count: count)
        counters.deallocate()
    }

    /// Adds `amount` to counter `index` (which must be below ``count``).
    package func add(_ amount: Int, at index: Int) {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        counters[index].add(amount, ordering: .relaxed)
    }

    /// Counter `index`'s value.
    package func value(at index: Int) -> Int {
        precondition(index >= 0 && index < count, "counter \(index) of \(count)")
        return counters[index].load(ordering: .relaxed)
    }
}
