import Synchronization

/// Carries the events of one task to one consumer with bounded buffering, and cancels the task
/// when the consumer goes away.
///
/// Events the consumer has not taken yet wait in a short queue that a `coalesce` rule keeps short
/// (merging progress, keeping only the latest partial image). The producing task is cancelled when
/// the consuming task is cancelled while waiting, or when the last reference to the channel (the
/// stream and its iterators) is dropped: unlike `AsyncThrowingStream`, whose producer on Linux keeps
/// running after the consumer breaks out of its loop (measured).
final class EventChannel<Event: Sendable>: Sendable {
    /// Adds `event` to the events not yet consumed, merging where that loses nothing the consumer needs.
    typealias Coalesce = @Sendable (_ pending: inout [Event], _ event: Event) -> Void
    /// Delivers an event to the consumer.
    typealias Yield = @Sendable (Event) -> Void

    private let buffer: EventBuffer<Event>
    private let task: Task<Void, Never>

    /// Starts `produce`, which yields events and ends by returning (the stream ends) or throwing
    /// (the consumer gets the error after the events before it).
    init(coalesce: @escaping Coalesce, produce: @escaping @Sendable (_ yield: @escaping Yield) async throws -> Void) {
        let buffer = EventBuffer<Event>(coalesce: coalesce)
        self.buffer = buffer
        task = Task {
            do {
                try await produce { buffer.push($0) }
                buffer.finish(nil)
            } catch {
                buffer.finish(error)
            }
        }
    }

    deinit { task.cancel() }

    /// The next event, waiting for it if need be; `nil` at the end.
    func next() async throws -> Event? {
        let task = self.task
        return try await withTaskCancellationHandler {
            try await buffer.next()
        } onCancel: {
            task.cancel()
        }
    }
}

/// The events not yet consumed, the producer's outcome, and the consumer waiting for either.
final class EventBuffer<Event: Sendable>: Sendable {
    private struct State {
        var pending: [Event] = []
        var failure: (any Error)?
        var isFinished = false
        var isDone = false
        var waiter: CheckedContinuation<Event?, any Error>?
    }

    private let state = Mutex(State())
    private let coalesce: EventChannel<Event>.Coalesce

    init(coalesce: @escaping EventChannel<Event>.Coalesce) {
        self.coalesce = coalesce
    }

    func push(_ event: Event) {
        let waiter: CheckedContinuation<Event?, any Error>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            coalesce(&state.pending, event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    func finish(_ error: (any Error)?) {
        let waiter: CheckedContinuation<Event?, any Error>? = state.withLock { state in
            state.isFinished = true
            state.failure = error
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.isDone = true
            return waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    func next() async throws -> Event? {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Event?, any Error>) in
                let ready: Result<Event?, any Error>? = state.withLock { state in
                    if !state.pending.isEmpty { return .success(state.pending.removeFirst()) }
                    if state.isDone { return .success(nil) }
                    if state.isFinished {
                        state.isDone = true
                        return state.failure.map { .failure($0) } ?? .success(nil)
                    }
                    if state.waiter != nil { return .success(nil) }   // a second concurrent consumer gets nothing
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
        }
    }
}
