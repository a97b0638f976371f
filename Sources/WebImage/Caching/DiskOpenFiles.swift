import Foundation
import Synchronization

/// The entries a ``DiskCache`` keeps open, by key, so that a warm hit costs an `fstat` and a `pread`
/// instead of an `open`, an `fstat`, a `read`, an `fgetxattr` and a `close`, and skips hashing the
/// key into its file name (nginx's `open_file_cache`, for the same reason).
///
/// - Bounded by `capacity` descriptors; when full, an arbitrary entry (the dictionary's first, so
///   spread over keys by their hash) is dropped to make room. `capacity` 0 keeps nothing open.
/// - Every hit checks the descriptor with `fstat` (``OpenDiskFile/isCurrent(_:)``), which notices an
///   entry replaced or removed behind the cache's back, by another process included.
/// - The cache drops a name when it stores, removes, evicts or forgets it (freeing the disk space of
///   a removed file at once, not at the next hit), and everything when it empties or loses its
///   directory. Each drop advances a generation; a reader that opened a file before a drop cannot
///   insert it after (``insert(_:forKey:opened:)``), so a replaced file's old inode never comes back.
final class DiskOpenFiles: Sendable {
    private struct State {
        var files: [String: OpenDiskFile] = [:]
        /// The keys of each name (one in practice; several keys can share a name only through
        /// the extension-less fallback name).
        var keysByName: [String: [String]] = [:]
        var generation: UInt64 = 0
    }

    /// The most descriptors kept open.
    let capacity: Int
    private let state = Mutex(State())

    /// - Parameter capacity: the most descriptors kept open; 0 (or less) keeps none, and it is cut to
    ///   an eighth of the process's soft `RLIMIT_NOFILE` (a server's connections need the rest).
    init(capacity: Int) {
        var limit = rlimit()
        let allowed = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
            ? Int(clamping: limit.rlim_cur / 8) : Int.max
        self.capacity = min(max(0, capacity), allowed)
    }

    /// The open entry for `key`, or `nil`.
    func file(forKey key: String) -> OpenDiskFile? {
        guard capacity > 0 else { return nil }
        return state.withLock { $0.files[key] }
    }

    /// The generation to pass to ``insert(_:forKey:opened:)``: read it before opening the file.
    func generation() -> UInt64 {
        state.withLock { $0.generation }
    }

    /// Keeps `file` open for `key`, unless something was dropped since `opened` (the file may be the
    /// old inode of an entry replaced meanwhile) or nothing may be kept. Returns whether it was kept;
    /// when not, the caller's reference is the last and the descriptor closes with it.
    @discardableResult
    func insert(_ file: OpenDiskFile, forKey key: String, opened: UInt64) -> Bool {
        guard capacity > 0 else { return false }
        // What is dropped is returned out of the lock and released (closed) after it.
        let (kept, dropped) = state.withLock { state -> (Bool, OpenDiskFile?) in
            guard state.generation == opened else { return (false, nil) }
            var dropped: OpenDiskFile?
            if let previous = state.files[key] {
                dropped = previous
                Self.unlink(key: key, name: previous.name, in: &state)
            } else if state.files.count >= capacity, let victim = state.files.first {
                dropped = victim.value
                state.files[victim.key] = nil
                Self.unlink(key: victim.key, name: victim.value.name, in: &state)
            }
            state.files[key] = file
            state.keysByName[file.name, default: []].append(key)
            return (true, dropped)
        }
        withExtendedLifetime(dropped) {}
        return kept
    }

    /// Drops the entry of `key` if it is still `file` (a reader found it stale).
    func discard(_ file: OpenDiskFile, forKey key: String) {
        let dropped = state.withLock { state -> OpenDiskFile? in
            guard let current = state.files[key], current === file else { return nil }
            state.files[key] = nil
            Self.unlink(key: key, name: file.name, in: &state)
            state.generation &+= 1
            return current
        }
        withExtendedLifetime(dropped) {}
    }

    /// Drops every entry opened under the file name `name` (stored again, removed, evicted).
    func invalidate(name: String) {
        guard capacity > 0 else { return }
        let dropped = state.withLock { state -> [OpenDiskFile] in
            state.generation &+= 1
            guard let keys = state.keysByName.removeValue(forKey: name) else { return [] }
            return keys.compactMap { state.files.removeValue(forKey: $0) }
        }
        withExtendedLifetime(dropped) {}
    }

    /// Drops every entry whose file name `isGone` says is gone (a sweep found the directory without it).
    func invalidate(where isGone: (String) -> Bool) {
        guard capacity > 0 else { return }
        let dropped = state.withLock { state -> [OpenDiskFile] in
            let gone = state.keysByName.keys.filter(isGone)
            guard !gone.isEmpty else { return [] }
            state.generation &+= 1
            return gone.flatMap { name in
                (state.keysByName.removeValue(forKey: name) ?? []).compactMap { state.files.removeValue(forKey: $0) }
            }
        }
        withExtendedLifetime(dropped) {}
    }

    /// Drops every entry (the cache was emptied, or its directory made again).
    func invalidateAll() {
        guard capacity > 0 else { return }
        let dropped = state.withLock { state -> [String: OpenDiskFile] in
            state.generation &+= 1
            state.keysByName.removeAll()
            defer { state.files.removeAll() }
            return state.files
        }
        withExtendedLifetime(dropped) {}
    }

    /// How many descriptors are open now.
    var count: Int { state.withLock { $0.files.count } }

    private static func unlink(key: String, name: String, in state: inout State) {
        state.keysByName[name]?.removeAll { $0 == key }
        if state.keysByName[name]?.isEmpty == true { state.keysByName[name] = nil }
    }
}
