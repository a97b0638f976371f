import Foundation
import Synchronization

/// The URLs that failed permanently, each until its entry expires (SDWebImage keeps them for the
/// life of the process, which its users find too harsh), with the failure that put it there (a
/// server answers a blocked URL with the status its first failure got).
///
/// Bounded: past ``capacity`` entries, expired ones go first, then the oldest.
final class FailedURLBlocklist: Sendable {
    private struct Entry {
        var expiry: ContinuousClock.Instant
        var failure: WebImageError?
    }

    private let entries = Mutex<[URL: Entry]>([:])
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
        return entry(for: url) != nil
    }

    /// The failure that blocked `url`, while it is blocked (`nil` when it is not, or none was given).
    func failure(for url: URL) -> WebImageError? {
        guard size.load(ordering: .relaxed) > 0 else { return nil }
        return entry(for: url)?.failure
    }

    private func entry(for url: URL) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[url] else { return nil }
            if entry.expiry > .now { return entry }
            entries[url] = nil
            size.store(entries.count, ordering: .relaxed)
            return nil
        }
    }

    /// Blocks `url` for `duration` (nothing for a zero duration), remembering `failure`.
    func insert(_ url: URL, for duration: Duration, failure: WebImageError? = nil) {
        guard duration > .zero else { return }
        entries.withLock { entries in
            entries[url] = Entry(expiry: .now + duration, failure: failure)
            defer { size.store(entries.count, ordering: .relaxed) }
            guard entries.count > capacity else { return }
            let now = ContinuousClock.now
            entries = entries.filter { $0.value.expiry > now }
            while entries.count > capacity, let oldest = entries.min(by: { $0.value.expiry < $1.value.expiry }) {
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
