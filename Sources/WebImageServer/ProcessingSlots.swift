import Synchronization
import WebImage

/// At most `limit` requests processed at once, at most `queueLimit` waiting in arrival order, and
/// anything past that refused at once (answered 429): memory stays bounded whatever the load.
final class ProcessingSlots: Sendable {
    private struct State {
        var running = 0
        /// Requests that started on a cold thread of their own and have not taken a slot yet
        /// (``tryReserve(below:)``).
        var reserved = 0
        var waiting = FIFOBuffer<CheckedContinuation<Void, Never>>()
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

    /// Reserves a cold thread for a request that starts there before it knows whether it needs a
    /// slot (``ImageRequestHandler/dispatch(_:)``): granted while the slots taken plus the
    /// reservations are fewer than `ceiling` (the cold thread count), so that every slot holder and
    /// every reserving request can have a cold thread at once. Not a slot: it is not counted in
    /// flight, and never refuses or delays a request that takes a slot. End it with
    /// ``endReservation()``.
    func tryReserve(below ceiling: Int) -> Bool {
        state.withLock { state in
            guard state.running + state.reserved < ceiling else { return false }
            state.reserved += 1
            return true
        }
    }

    /// Reservations of ``tryReserve(below:)`` not ended yet.
    var reservations: Int { state.withLock { $0.reserved } }

    /// Ends a reservation of ``tryReserve(below:)``: the request was answered, or goes on to take a slot.
    func endReservation() {
        state.withLock { $0.reserved -= 1 }
    }

    /// Gives the slot to the longest-waiting request, or frees it.
    func release() {
        metrics.inFlight.subtract(1, ordering: .relaxed)
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.popFirst()   // the slot passes on: `running` stays
        }
        next?.resume()
    }
}
