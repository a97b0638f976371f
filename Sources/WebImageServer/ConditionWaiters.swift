import Synchronization

/// Tasks waiting, without polling, for a condition that other threads make true: ``wait(upTo:until:)``
/// returns as soon as its condition holds, re-checked at each ``notify()``, or when its time is up.
///
/// No wake-up is lost: a waiter checks its condition and registers under one lock, and whoever
/// changes what the condition reads calls ``notify()`` after the change, which takes the same lock.
/// Waiting ignores task cancellation (a drain must finish even when the task that asked to stop
/// was cancelled); only the timeout ends it early.
final class ConditionWaiters: Sendable {
    private struct Waiter {
        let isSatisfied: @Sendable () -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        /// Waiters whose time ran out before they were registered.
        var expired: Set<UInt64> = []
    }

    private let state = Mutex(State())

    /// Returns `true` once `isSatisfied` holds (at once if it does now), `false` after `timeout`.
    func wait(upTo timeout: Duration, until isSatisfied: @escaping @Sendable () -> Bool) async -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let timer = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }   // cancelled: answered already
            self.expire(id)
        }
        defer {
            timer.cancel()
            state.withLock { _ = $0.expired.remove(id) }   // a timer that fired just as the condition held
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = state.withLock { state -> Bool? in
                if isSatisfied() { return true }
                if state.expired.remove(id) != nil { return false }
                state.waiters[id] = Waiter(isSatisfied: isSatisfied, continuation: continuation)
                return nil
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Re-checks every waiter's condition and resumes those that hold.
    func notify() {
        let satisfied = state.withLock { state -> [Waiter] in
            guard !state.waiters.isEmpty else { return [] }
            let ready = state.waiters.filter { $0.value.isSatisfied() }
            for id in ready.keys { state.waiters[id] = nil }
            return Array(ready.values)
        }
        for waiter in satisfied { waiter.continuation.resume(returning: true) }
    }

    private func expire(_ id: UInt64) {
        let waiter = state.withLock { state -> Waiter? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                state.expired.insert(id)
                return nil
            }
            return waiter
        }
        waiter?.continuation.resume(returning: false)
    }
}
