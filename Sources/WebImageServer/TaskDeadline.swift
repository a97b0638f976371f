import Synchronization

/// Waiting for a task's value with a time limit, without waiting for the task to end.
enum TaskDeadline {
    /// Resumes a continuation once, whichever of its racers comes first.
    private final class Once: Sendable {
        let done = Atomic<Bool>(false)

        /// Whether this is the first call.
        func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
    }

    /// `task`'s value, or `nil` when it has not finished within `limit`: then the task goes on (the
    /// caller decides whether to cancel it). The timer is cancelled as soon as the value comes.
    static func value<T: Sendable>(of task: Task<T, Never>, within limit: Duration) async -> T? {
        let once = Once()
        return await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
            let timer = Task {
                try? await Task.sleep(for: limit)
                if !Task.isCancelled, once.claim() { continuation.resume(returning: nil) }
            }
            Task {
                let value = await task.value
                timer.cancel()
                if once.claim() { continuation.resume(returning: value) }
            }
        }
    }
}
