import Foundation
import Synchronization

/// Watches the process's memory headroom and calls ``ImageCache/handleMemoryPressure()`` when it
/// runs low. Linux has no memory-pressure notification a library can subscribe to, so the monitor
/// polls (cheap: two small file reads):
///
/// - the cgroup v2 limit (`/sys/fs/cgroup/memory.max` and `memory.current`): pressure when usage
///   passes ``cgroupUsageThreshold`` of the limit — what a container's OOM killer acts on;
/// - otherwise `/proc/meminfo`: pressure when `MemAvailable` falls below ``availableMemoryThreshold``
///   of `MemTotal`.
///
/// Opt-in: create one and either ``run()`` it in a task of yours (structured: it polls until that
/// task is cancelled, the shape a service lifecycle wants), or ``start()`` it and keep it alive;
/// ``stop()``, releasing it, or ``ImageCache/shutdown()`` of its cache ends the polling.
public final class MemoryPressureMonitor: Sendable {
    /// The cache to trim.
    public let cache: ImageCache
    /// How often to look; default 2 seconds.
    public let interval: Duration
    /// Fraction of the cgroup limit above which memory is short; default 0.9.
    public let cgroupUsageThreshold: Double
    /// Fraction of total memory below which available memory is short; default 0.05.
    public let availableMemoryThreshold: Double

    let cgroupDirectory: String
    let meminfoPath: String
    private let task = TaskBox()

    /// Creates a monitor for `cache` (not yet started); parameters default to the properties' defaults.
    public convenience init(cache: ImageCache, interval: Duration = .seconds(2), cgroupUsageThreshold: Double = 0.9,
                            availableMemoryThreshold: Double = 0.05) {
        self.init(cache: cache, interval: interval, cgroupUsageThreshold: cgroupUsageThreshold,
                  availableMemoryThreshold: availableMemoryThreshold, cgroupDirectory: "/sys/fs/cgroup", meminfoPath: "/proc/meminfo")
    }

    init(cache: ImageCache, interval: Duration, cgroupUsageThreshold: Double, availableMemoryThreshold: Double,
         cgroupDirectory: String, meminfoPath: String) {
        self.cache = cache
        self.interval = interval
        self.cgroupUsageThreshold = cgroupUsageThreshold
        self.availableMemoryThreshold = availableMemoryThreshold
        self.cgroupDirectory = cgroupDirectory
        self.meminfoPath = meminfoPath
    }

    deinit { task.cancel() }

    /// Starts polling in a task of the monitor's own (again, if it was stopped). Returns at once.
    public func start() {
        task.replace(Task { [weak self] in
            while !Task.isCancelled {
                guard let self, !self.cache.isShutDown else { return }
                self.check()
                try? await Task.sleep(for: self.interval)
            }
        })
    }

    /// Polls every ``interval`` in the calling task until that task is cancelled or the cache is
    /// shut down, then returns.
    public func run() async {
        while !Task.isCancelled && !cache.isShutDown {
            check()
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }

    /// Stops polling.
    public func stop() { task.cancel() }

    /// Whether memory is short right now, by the rules in the type's documentation.
    public var isUnderPressure: Bool {
        if let limit = readNumber(cgroupDirectory + "/memory.max"), let current = readNumber(cgroupDirectory + "/memory.current"), limit > 0 {
            return Double(current) > Double(limit) * cgroupUsageThreshold
        }
        guard let text = (try? DiskFile.read(meminfoPath)).flatMap({ $0 }).map({ String(decoding: $0, as: UTF8.self) }) else { return false }
        func field(_ name: String) -> Double? {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
            return line.split(separator: " ").dropFirst().first.flatMap { Double($0) }
        }
        guard let total = field("MemTotal"), let available = field("MemAvailable"), total > 0 else { return false }
        return available < total * availableMemoryThreshold
    }

    /// Looks once and trims the cache if memory is short; returns whether it trimmed.
    @discardableResult
    public func check() -> Bool {
        guard isUnderPressure else { return false }
        cache.handleMemoryPressure()
        return true
    }

    /// A number file such as memory.max; `max` (no limit) and unreadable files give nil.
    private func readNumber(_ path: String) -> Int? {
        guard let data = (try? DiskFile.read(path)) ?? nil else { return nil }
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// A replaceable task handle behind a lock.
final class TaskBox: Sendable {
    private let handle = Mutex<Task<Void, Never>?>(nil)

    func replace(_ task: Task<Void, Never>) {
        handle.withLock { old in
            old?.cancel()
            old = task
        }
    }

    func cancel() {
        handle.withLock { $0?.cancel(); $0 = nil }
    }
}
