import Foundation

/// A fresh directory for one test, under this test process's own scratch root
/// (``TestScratch/root``), which is removed when the process exits: a test that forgets `remove()`,
/// or hands the path to a cache, a child process or `redis-server`, leaves nothing behind.
/// `remove()` deletes it sooner.
struct TemporaryDirectory {
    let url: URL

    init(_ label: String = #function) {
        let name = "\(label.filter { $0.isLetter || $0.isNumber })-\(UUID().uuidString.prefix(8))"
        url = TestScratch.root.appendingPathComponent(name, isDirectory: true)
    }

    var path: String { url.path }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// The regular files in the directory, hidden ones included.
    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }
}

/// The test process's scratch folder: `<tmp>/webimage-tests-<pid>`, made on first use and removed
/// at exit (`atexit`, which `swift test`'s runners reach by returning from main or calling `exit`).
/// A process that dies without exiting (SIGKILL, a crash) leaves its root; the next test process
/// removes every root whose process is gone before making its own.
enum TestScratch {
    private static let prefix = "webimage-tests-"

    /// The root's path; made once, on first use.
    static let root: URL = {
        let base = FileManager.default.temporaryDirectory
        removeAbandonedRoots(in: base)
        let root = base.appendingPathComponent("\(prefix)\(getpid())", isDirectory: true)
        try? FileManager.default.removeItem(at: root)   // a root left by a dead process with this pid
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        rootPath = root.path
        atexit { removeRoot() }
        return root
    }()

    /// Written once, inside `root`'s initializer (which Swift runs once, under its own lock), before
    /// the `atexit` handler that reads it is registered.
    private nonisolated(unsafe) static var rootPath: String?

    /// Removes the root, trying again a few times: a thread still writing (a background store, a
    /// child process) can add a file while the folder is emptied, and the removal then fails.
    private static func removeRoot() {
        guard let rootPath else { return }
        for _ in 0..<5 {
            try? FileManager.default.removeItem(atPath: rootPath)
            guard FileManager.default.fileExists(atPath: rootPath) else { return }
            usleep(20_000)
        }
    }

    /// Removes `webimage-tests-<pid>` folders in `base` whose process no longer runs.
    private static func removeAbandonedRoots(in base: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid() else { continue }
            if kill(pid, 0) == -1 && errno == ESRCH {
                try? FileManager.default.removeItem(at: base.appendingPathComponent(name, isDirectory: true))
            }
        }
    }
}
