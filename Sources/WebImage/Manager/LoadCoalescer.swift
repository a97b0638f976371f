import Synchronization

/// Runs one pipeline per key however many callers ask for it at once: later callers join the
/// load under way and get the same result and the events from the moment they joined.
///
/// A caller whose task is cancelled stops waiting at once; the load's task is cancelled only when
/// no caller waits any more, and its entry is dropped then, so a new caller starts a fresh load.
/// Everything is behind one `Mutex`; continuations are resumed and tasks started after it is released.
final class LoadCoalescer: Sendable {
    typealias Continuation = CheckedContinuation<ImageResult, any Error>
    typealias EventHandler = @Sendable (ImageLoadEvent) -> Void
    typealias Work = @Sendable (_ emit: @escaping EventHandler) async throws(WebImageError) -> ImageResult

    private struct Waiter {
        var continuation: Continuation
        var events: EventHandler?
    }

    private struct Entry {
        var generation: UInt64
        var waiters: [UInt64: Waiter] = [:]
        var task: Task<Void, Never>?
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Callers that have an id but are not registered yet, and those cancelled in that window.
        var pending: Set<UInt64> = []
        var cancelledEarly: Set<UInt64> = []
        var sequence: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Whether any load is under way.
    var isRunning: Bool { state.withLock { !$0.entries.isEmpty } }

    /// The callers waiting on the load for `key` (for tests and diagnostics).
    func callerCount(forKey key: String) -> Int {
        state.withLock { $0.entries[key]?.waiters.count ?? 0 }
    }

    /// Waits for the load of `key`, starting `work` if none is under way.
    /// - Parameter joined: called (before waiting) with whether this caller joined a load under way.
    func load(key: String, events: EventHandler?, joined: (Bool) -> Void, work: @escaping Work) async throws -> ImageResult {
        let id = state.withLock { state in
            state.sequence += 1
            state.pending.insert(state.sequence)
            return state.sequence
        }
        var didJoin = false
        let result = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Continuation) in
                enum Next { case resumeCancelled, started(UInt64), joined }
                let next: Next = state.withLock { state in
                    state.pending.remove(id)
                    if state.cancelledEarly.remove(id) != nil { return .resumeCancelled }
                    if state.entries[key] != nil {
                        state.entries[key]!.waiters[id] = Waiter(continuation: continuation, events: events)
                        return .joined
                    }
                    state.sequence += 1
                    var entry = Entry(generation: state.sequence)
                    entry.waiters[id] = Waiter(continuation: continuation, events: events)
                    state.entries[key] = entry
                    return .started(entry.generation)
                }
                switch next {
                case .resumeCancelled:
                    continuation.resume(throwing: CancellationError())
                case .joined:
                    didJoin = true
                case .started(let generation):
                    let task = Task {
                        let outcome: Result<ImageResult, WebImageError>
                        do throws(WebImageError) {
                            outcome = .success(try await work { [weak self] event in self?.emit(event, key: key, generation: generation) })
                        } catch {
                            outcome = .failure(error)
                        }
                        self.finish(key: key, generation: generation, with: outcome)
                    }
                    let cancelNow = state.withLock { state -> Bool in
                        guard state.entries[key]?.generation == generation else { return true }
                        state.entries[key]!.task = task
                        return false
                    }
                    if cancelNow { task.cancel() }
                }
            }
        } onCancel: {
            self.leave(id, key: key)
        }
        joined(didJoin)
        return result
    }

    /// Cancels every load; every waiting caller gets a `CancellationError`.
    func cancelAll() {
        let entries = state.withLock { state in
            let entries = Array(state.entries.values)
            state.entries.removeAll()
            return entries
        }
        for entry in entries {
            entry.task?.cancel()
            for waiter in entry.waiters.values { waiter.continuation.resume(throwing: CancellationError()) }
        }
    }

    private func leave(_ id: UInt64, key: String) {
        let (waiter, abandoned): (Waiter?, Task<Void, Never>?) = state.withLock { state in
            guard var entry = state.entries[key], let waiter = entry.waiters.removeValue(forKey: id) else {
                if state.pending.contains(id) { state.cancelledEarly.insert(id) }   // else it has its result already
                return (nil, nil)
            }
            if entry.waiters.isEmpty {
                state.entries[key] = nil
                return (waiter, entry.task)
            }
            state.entries[key] = entry
            return (waiter, nil)
        }
        waiter?.continuation.resume(throwing: CancellationError())
        abandoned?.cancel()
    }

    private func emit(_ event: ImageLoadEvent, key: String, generation: UInt64) {
        let handlers = state.withLock { state -> [EventHandler] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            return entry.waiters.values.compactMap(\.events)
        }
        for handler in handlers { handler(event) }
    }

    private func finish(key: String, generation: UInt64, with outcome: Result<ImageResult, WebImageError>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard let entry = state.entries[key], entry.generation == generation else { return [] }
            state.entries[key] = nil
            return Array(entry.waiters.values)
        }
        for waiter in waiters { waiter.continuation.resume(with: outcome.mapError { $0 as any Error }) }
    }
}
