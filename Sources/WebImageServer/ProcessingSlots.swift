import Synchronization

/// At most `limit` requests processed at once, at most `queueLimit` waiting in arrival order, and
/// anything past that refused at once (answered 429): memory stays bounded whatever the load.
final class ProcessingSlots: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let limit: Int
    private let queueLimit: Int
    private let metrics: ServerMetrics

    init(limit: Int, queueLimit: Int, metrics: ServerMetrics) {
        self.limit = limit
        self.queueLimit = queueLimit
        self.metrics = metrics
    }

    /// Takes a slot, waiting in the queue if none is free; `false` when the queue is full.
    func acquire() async -> Bool {
        enum Decision { case run, wait, refuse }
        let decision = state.withLock { state -> Decision in
            if state.running < limit {
                state.running += 1
                return .run
            }
            return state.waiting.count < queueLimit ? .wait : .refuse
        }
        switch decision {
        case .refuse:
            return false
        case .run:
            metrics.inFlight.add(1, ordering: .relaxed)
            return true
        case .wait:
            metrics.queued.add(1, ordering: .relaxed)
            await withCheckedContinuation { continuation in
                let runsNow = state.withLock { state -> Bool in
                    if state.running < limit {
                        state.running += 1
                        return true
                    }
                    state.waiting.append(continuation)
                    return false
                }
                if runsNow { continuation.resume() }
            }
            metrics.queued.subtract(1, ordering: .relaxed)
            metrics.inFlight.add(1, ordering: .relaxed)
            return true
        }
    }

    /// Takes a slot without waiting when fewer than `ceiling` (and fewer than the limit) are taken
    /// and no request waits for one; `false` otherwise (nothing taken).
    func tryAcquire(below ceiling: Int) -> Bool {
        let taken = state.withLock { state -> Bool in
            guard state.running < min(limit, ceiling), state.waiting.isEmpty else { return false }
            state.running += 1
            return true
        }
        if taken { metrics.inFlight.add(1, ordering: .relaxed) }
        return taken
    }

    /// Gives the slot to the longest-waiting request, or frees it.
    func release() {
        metrics.inFlight.subtract(1, ordering: .relaxed)
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()   // the slot passes on: `running` stays
        }
        next?.resume()
    }
}
