import Foundation
import Synchronization
import WebImage

/// A caller's continuation, resumed once: by the worker's reply, or by the watchdog at the
/// command's limit, whichever comes first (the other is dropped).
typealias RedisCaller = ResumeOnce<Result<[RedisReply], RedisError>>

/// The commands of a node whose callers are still waiting, with the time by which each must be
/// answered. A watchdog thread answers the late ones with `timedOut`: the socket timeouts bound each
/// `read`/`write`, not a whole command (a server trickling bytes, a host name that takes seconds
/// to resolve), and a worker stuck that way must not hold its callers, or those queued behind it.
final class PendingCommands: Sendable {
    private let commands = Mutex([Int: (limit: ContinuousClock.Instant, caller: RedisCaller)]())
    private let nextID = Atomic<Int>(0)
    private let closed = Atomic<Bool>(false)

    func add(_ caller: RedisCaller, limit: ContinuousClock.Instant) -> Int {
        let id = nextID.add(1, ordering: .relaxed).newValue
        commands.withLock { $0[id] = (limit, caller) }
        return id
    }

    func remove(_ id: Int) {
        _ = commands.withLock { $0.removeValue(forKey: id) }
    }

    /// Starts the watchdog: every `interval`, the callers past their limit are answered `timedOut`
    /// (and `expired` is called once for each), until ``close()``.
    func startWatchdog(interval: Duration, name: String, expired: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            let microseconds = UInt32(clamping: interval.components.seconds * 1_000_000 + interval.components.attoseconds / 1_000_000_000_000)
            while !closed.load(ordering: .relaxed) {
                usleep(max(1000, microseconds))   // the watchdog's own thread: never one of the cooperative pool
                let now = ContinuousClock.now
                let late = commands.withLock { commands -> [RedisCaller] in
                    let ids = commands.filter { $0.value.limit <= now }.map(\.key)
                    return ids.compactMap { commands.removeValue(forKey: $0)?.caller }
                }
                for caller in late where caller.resume(returning: .failure(.timedOut(endpoint: name))) { expired() }
            }
        }
        thread.name = "webimage.redis.watchdog"
        thread.start()
    }

    /// Stops the watchdog.
    func close() {
        closed.store(true, ordering: .relaxed)
    }
}
