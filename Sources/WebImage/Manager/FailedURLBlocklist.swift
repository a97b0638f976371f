import Foundation
import Synchronization

/// The URLs that failed permanently, each until its entry expires (SDWebImage keeps them for the
/// life of the process, which its users find too harsh).
///
/// Bounded: past ``capacity`` entries, expired ones go first, then the oldest.
final class FailedURLBlocklist: Sendable {
    private let entries = Mutex<[URL: ContinuousClock.Instant]>([:])
    /// Mirrors `entries.count`, so the common case (nothing blocked) costs one atomic load and no
    /// hashing of the URL.
    private let size = Atomic<Int>(0)
    let capacity: Int

    init(capacity: Int = 10_000) {
        self.capacity = capacity
    }

    /// Whether `url` is blocked now (an expired entry is dropped).
    func contains(_ url: URL) -> Bool {
        guard size.load(ordering: .relaxed) > 0 else { return false }
        return entries.withLock { entries in
            guard let expiry = entries[url] else { return false }
            if expiry > .now { return true }
            entries[url] = nil
            size.store(entries.count, ordering: .relaxed)
            return false
        }
    }

    /// Blocks `url` for `duration` (nothing for a zero duration).
    func insert(_ url: URL, for duration: Duration) {
        guard duration > .zero else { return }
        entries.withLock { entries in
            entries[url] = .now + duration
            defer { size.store(entries.count, ordering: .relaxed) }
            guard entries.count > capacity else { return }
            let now = ContinuousClock.now
            entries = entries.filter { $0.value > now }
            while entries.count > capacity, let oldest = entries.min(by: { $0.value < $1.value }) {
                entries[oldest.key] = nil
            }
        }
    }

    func remove(_ url: URL) {
        entries.withLock { entries in
            entries[url] = nil
            size.store(entries.count, ordering: .relaxed)
        }
    }

    func removeAll() {
        entries.withLock { entries in
            entries.removeAll()
            size.store(0, ordering: .relaxed)
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
