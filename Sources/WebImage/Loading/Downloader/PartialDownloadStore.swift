import Synchronization

/// The partial downloads a ``Downloader`` keeps for resuming, by URL, within a total byte limit.
///
/// Lock-based: its state sits behind a `Mutex`, held only for dictionary work (never across a call
/// out), so the session delegate's queue and the scheduler's launch queue use it directly. A
/// download *takes* its URL's partial when it starts (so two downloads never continue the same
/// bytes) and *keeps* what it has when it fails; the least recently kept partial is dropped first
/// when the limit is passed, and a partial larger than the whole limit is not kept at all.
///
/// Invariants (checked in debug builds after every change, and by ``checkInvariants()``):
/// - walking `older` links from `newest` visits every entry once and ends at `oldest`, and the
///   `newer` links mirror that walk;
/// - `totalBytes` is the sum of the entries' costs, and is at most `limit`;
/// - every entry's cost is positive (no empty partial is kept).
final class PartialDownloadStore: Sendable {
    struct Entry {
        var partial: PartialDownload
        /// The entry kept just before this one (less recently), if any.
        var older: String?
        /// The entry kept just after this one (more recently), if any.
        var newer: String?
    }

    struct State {
        var entries: [String: Entry] = [:]
        var newest: String?
        var oldest: String?
        var totalBytes = 0
        var limit: Int
    }

    private let state: Mutex<State>

    /// Creates an empty store that holds at most `limit` bytes (0 or less keeps nothing).
    init(limit: Int) {
        state = Mutex(State(limit: max(0, limit)))
    }

    /// The bytes kept.
    var totalBytes: Int { state.withLock { $0.totalBytes } }

    /// The partials kept.
    var count: Int { state.withLock { $0.entries.count } }

    /// The byte limit.
    var limit: Int { state.withLock { $0.limit } }

    /// The keys, most recently kept first (for tests).
    var keysByRecency: [String] {
        state.withLock { state in
            var keys: [String] = []
            var cursor = state.newest
            while let key = cursor {
                keys.append(key)
                cursor = state.entries[key]?.older
            }
            return keys
        }
    }

    /// Removes and returns the partial kept for `key`.
    func take(_ key: String) -> PartialDownload? {
        state.withLock { state in
            guard let entry = Self.unlink(key, in: &state) else { return nil }
            Self.checkInvariants(state)
            return entry.partial
        }
    }

    /// Keeps `partial` for `key` as the most recent entry, replacing any older one, then drops the
    /// least recently kept entries until the total fits the limit. A partial larger than the whole
    /// limit (or empty) is not kept, and the older one for `key` is dropped all the same: it is stale.
    /// - Returns: whether `partial` was kept.
    @discardableResult
    func keep(_ partial: PartialDownload, forKey key: String) -> Bool {
        state.withLock { state in
            defer { Self.checkInvariants(state) }
            _ = Self.unlink(key, in: &state)
            guard partial.cost > 0, partial.cost <= state.limit else { return false }
            state.entries[key] = Entry(partial: partial, older: state.newest, newer: nil)
            if let newest = state.newest { state.entries[newest]?.newer = key }
            state.newest = key
            if state.oldest == nil { state.oldest = key }
            state.totalBytes += partial.cost
            Self.trim(&state)
            return true
        }
    }

    /// Drops the partial kept for `key`, if any.
    func remove(_ key: String) {
        state.withLock { state in
            if Self.unlink(key, in: &state) != nil { Self.checkInvariants(state) }
        }
    }

    /// Changes the byte limit, dropping the least recently kept entries that no longer fit.
    func setLimit(_ limit: Int) {
        state.withLock { state in
            state.limit = max(0, limit)
            Self.trim(&state)
            Self.checkInvariants(state)
        }
    }

    /// Checks the invariants (debug builds only; for tests).
    func checkInvariants() {
        state.withLock { Self.checkInvariants($0) }
    }

    // MARK: - The list (called under the lock)

    private static func trim(_ state: inout State) {
        while state.totalBytes > state.limit, let oldest = state.oldest {
            _ = unlink(oldest, in: &state)
        }
    }

    private static func unlink(_ key: String, in state: inout State) -> Entry? {
        guard let entry = state.entries.removeValue(forKey: key) else { return nil }
        if let older = entry.older { state.entries[older]?.newer = entry.newer } else { state.oldest = entry.newer }
        if let newer = entry.newer { state.entries[newer]?.older = entry.older } else { state.newest = entry.older }
        state.totalBytes -= entry.partial.cost
        return entry
    }

    private static func checkInvariants(_ state: State) {
        #if DEBUG
        var visited = 0
        var total = 0
        var cursor = state.newest
        var newer: String?
        while let key = cursor {
            guard let entry = state.entries[key] else { preconditionFailure("PartialDownloadStore: \(key) is linked but not stored") }
            precondition(entry.newer == newer, "PartialDownloadStore: \(key)'s newer link does not mirror the walk")
            precondition(entry.partial.cost > 0, "PartialDownloadStore: \(key) is empty")
            visited += 1
            total += entry.partial.cost
            precondition(visited <= state.entries.count, "PartialDownloadStore: the list has a cycle")
            newer = key
            cursor = entry.older
        }
        precondition(newer == state.oldest, "PartialDownloadStore: the walk does not end at the oldest entry")
        precondition(visited == state.entries.count, "PartialDownloadStore: \(state.entries.count - visited) entries are not linked")
        precondition(total == state.totalBytes, "PartialDownloadStore: totalBytes \(state.totalBytes) is not the sum \(total)")
        precondition(total <= state.limit, "PartialDownloadStore: \(total) bytes kept over the limit of \(state.limit)")
        #endif
    }
}
