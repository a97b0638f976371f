import Synchronization

/// How far a prefetch batch has got.
public struct PrefetchProgress: Sendable, Hashable {
    /// URLs loaded (or already cached) so far.
    public var finishedCount: Int
    /// URLs that failed or were cancelled so far.
    public var skippedCount: Int
    /// URLs in the batch.
    public var totalCount: Int

    /// Creates a progress value.
    public init(finishedCount: Int = 0, skippedCount: Int = 0, totalCount: Int) {
        self.finishedCount = finishedCount
        self.skippedCount = skippedCount
        self.totalCount = totalCount
    }

    /// Whether every URL of the batch is finished or skipped.
    public var isComplete: Bool { finishedCount + skippedCount >= totalCount }
}

/// One batch handed to ``Prefetcher/prefetch(urls:options:context:storesDataOnly:)``: its progress,
/// its completion, and a way to cancel it.
public final class PrefetchToken: Sendable {
    private struct State {
        var progress: PrefetchProgress
        var isCancelled = false
        var observers: [AsyncStream<PrefetchProgress>.Continuation] = []
        var waiters: [CheckedContinuation<PrefetchProgress, Never>] = []
    }

    /// The number of URLs in the batch.
    public let totalCount: Int
    private let state: Mutex<State>
    private let onCancel: @Sendable (PrefetchToken) -> Void

    init(totalCount: Int, onCancel: @escaping @Sendable (PrefetchToken) -> Void) {
        self.totalCount = totalCount
        self.onCancel = onCancel
        state = Mutex(State(progress: PrefetchProgress(totalCount: totalCount)))
    }

    /// The progress now.
    public var progress: PrefetchProgress { state.withLock { $0.progress } }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// The progress as it changes: the current value first, then every change (a slow consumer
    /// gets the latest value, never a backlog), ending once the batch is complete. The counts only
    /// grow, and the last value has `finishedCount + skippedCount == totalCount`.
    public func progressUpdates() -> AsyncStream<PrefetchProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: PrefetchProgress.self, bufferingPolicy: .bufferingNewest(1))
        let current = state.withLock { state in
            if !state.progress.isComplete { state.observers.append(continuation) }
            return state.progress
        }
        continuation.yield(current)
        if current.isComplete { continuation.finish() }
        return stream
    }

    /// Waits until every URL is finished or skipped, and returns the final progress.
    public func completion() async -> PrefetchProgress {
        await withCheckedContinuation { continuation in
            let done: PrefetchProgress? = state.withLock { state in
                if state.progress.isComplete { return state.progress }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// Stops the batch: URLs not started yet are skipped, loads under way are cancelled (and count as
    /// skipped). Loads that other callers share go on for them.
    public func cancel() {
        let first = state.withLock { state in
            defer { state.isCancelled = true }
            return !state.isCancelled
        }
        if first { onCancel(self) }
    }

    /// Counts one URL as finished or skipped, notifying observers and, at the end, waiters.
    func record(finished: Bool) {
        let (progress, observers, waiters) = state.withLock { state in
            guard !state.progress.isComplete else {
                return (state.progress, [AsyncStream<PrefetchProgress>.Continuation](), [CheckedContinuation<PrefetchProgress, Never>]())
            }
            if finished { state.progress.finishedCount += 1 } else { state.progress.skippedCount += 1 }
            let observers = state.observers
            var waiters: [CheckedContinuation<PrefetchProgress, Never>] = []
            if state.progress.isComplete {
                state.observers.removeAll()
                waiters = state.waiters
                state.waiters.removeAll()
            }
            return (state.progress, observers, waiters)
        }
        for observer in observers {
            observer.yield(progress)
            if progress.isComplete { observer.finish() }
        }
        for waiter in waiters { waiter.resume(returning: progress) }
    }
}
