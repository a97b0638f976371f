import Synchronization

/// Unstructured tasks an object starts and must be able to wait for: the disk writes a load does
/// not wait for, which a shutdown or a flush must see finished before the process exits.
///
/// Lock-based: a count of running tasks and the continuations of those waiting for it to reach
/// zero; continuations are resumed after the lock is released.
package final class BackgroundTasks: Sendable {
    private struct State {
        var running = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    /// Creates an empty set of tasks.
    package init() {}

    /// Tasks started and not yet finished.
    package var count: Int { state.withLock { $0.running } }

    /// Starts `work` in a task of its own and counts it until it ends; on `executor` when given
    /// (a task executor preference, which default actors the work calls run on too), else on the
    /// global executor.
    package func start(on executor: (any TaskExecutor)? = nil, _ work: @escaping @Sendable () async -> Void) {
        state.withLock { $0.running += 1 }
        Task(executorPreference: executor) {
            await work()
            self.finished()
        }
    }

    /// Returns once no task started here is running (at once if none is). Tasks started while it
    /// waits are waited for too. Not cancellable: a shutdown must see its writes land.
    package func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.running == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func finished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running -= 1
            precondition(state.running >= 0, "BackgroundTasks: more tasks finished than started")
            guard state.running == 0 else { return [] }
            defer { state.idleWaiters.removeAll() }
            return state.idleWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
