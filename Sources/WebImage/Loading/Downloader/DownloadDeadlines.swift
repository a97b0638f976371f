import Foundation
import Synchronization

/// The total deadlines of a ``Downloader``'s running downloads, served by one wake-up.
///
/// A Dispatch timer per download cost about five context switches each (measured: a fifth of the
/// CPU time of a 19 KB download). Here the timer is set for the earliest deadline; when it fires it
/// fails what has expired and sets itself for the next. With one timeout for all downloads, later
/// deadlines never move it; an earlier one (a shorter timeout set while downloads run) does.
final class DownloadDeadlines: Sendable {
    private struct Entry {
        weak var operation: DownloadOperation?
        var deadline: ContinuousClock.Instant
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// When the timer is set to wake next (`nil`: not set).
        var wakeAt: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// Fires the deadlines. A Dispatch queue of its own, not a task on the cooperative pool: a pool
    /// saturated with decoding must not delay a time-out.
    private static let queue = DispatchQueue(label: "WebImage.Downloader.deadlines")

    /// Fails `operation` with ``WebImageError/timedOut(url:)`` at `deadline` unless it is forgotten first.
    func watch(_ operation: DownloadOperation, until deadline: ContinuousClock.Instant) {
        let wake: ContinuousClock.Instant? = state.withLock { state in
            state.entries[ObjectIdentifier(operation)] = Entry(operation: operation, deadline: deadline)
            if let wakeAt = state.wakeAt, wakeAt <= deadline { return nil }
            state.wakeAt = deadline
            return deadline
        }
        if let wake { scheduleWake(at: wake) }
    }

    /// Stops watching `operation` (it finished).
    func forget(_ operation: DownloadOperation) {
        state.withLock { _ = $0.entries.removeValue(forKey: ObjectIdentifier(operation)) }
    }

    /// Stops watching everything.
    func forgetAll() {
        state.withLock { $0.entries.removeAll() }
    }

    /// The downloads being watched (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    private func scheduleWake(at instant: ContinuousClock.Instant) {
        let delay = max(.zero, instant - .now)
        Self.queue.asyncAfter(deadline: .now() + .nanoseconds(Int(MonotonicClock.nanoseconds(of: delay)))) { [weak self] in
            self?.fired(scheduledFor: instant)
        }
    }

    /// Fails the operations whose deadline has passed and sets the timer for the next one.
    private func fired(scheduledFor instant: ContinuousClock.Instant) {
        let now = ContinuousClock.now
        let (expired, wake): ([DownloadOperation], ContinuousClock.Instant?) = state.withLock { state in
            if state.wakeAt == instant { state.wakeAt = nil }
            var expired: [DownloadOperation] = []
            var next: ContinuousClock.Instant?
            for (id, entry) in state.entries {
                if entry.deadline <= now || entry.operation == nil {
                    if let operation = entry.operation { expired.append(operation) }
                    state.entries[id] = nil
                } else if next.map({ entry.deadline < $0 }) ?? true {
                    next = entry.deadline
                }
            }
            guard let next, state.wakeAt.map({ next < $0 }) ?? true else { return (expired, nil) }
            state.wakeAt = next
            return (expired, next)
        }
        if let wake { scheduleWake(at: wake) }
        for operation in expired { operation.fail(.timedOut(url: operation.url)) }
    }
}
