import Synchronization

/// Runs one piece of work per key however many callers ask for it at once: later callers join the
/// work under way and get the same outcome, and the events from the moment they joined.
///
/// A caller whose task is cancelled stops waiting at once; the work's task is cancelled only when
/// no caller waits any more, and its entry is dropped then, so a new caller starts fresh work.
///
/// Lock-based, not an actor: one `Mutex` guards the table of live entries, each a ``SharedWork``
/// machine plus its task; continuations are resumed, handlers called and tasks started or cancelled
/// only after the lock is released. The manager uses it for loads (`Success` = the pipeline's
/// outcome); anything else that must run once per key can too.
final class LoadCoalescer<Success: Sendable>: Sendable {
    typealias Continuation = CheckedContinuation<Success, any Error>
    typealias EventHandler = @Sendable (ImageLoadEvent) -> Void
    typealias Work = @Sendable (_ emit: @escaping EventHandler) async throws(WebImageError) -> Success

    private struct Waiter {
        var continuation: Continuation
        var events: EventHandler?
        /// What this caller gets when the work is cancelled for everyone (its own URL).
        var cancellation: WebImageError
    }

    private struct Entry {
        var key: String
        /// The outcome recorded when the work is cancelled for everyone (each caller is resumed with
        /// its own cancellation, see ``Waiter``).
        var cancellation: WebImageError
        var work = SharedWork<Waiter, Success, WebImageError>()
        var task: Task<Void, Never>?
    }

    private struct State {
        /// Entries by generation: finished ones stay until their last reserved caller collects the outcome.
        var entries: [UInt64: Entry] = [:]
        /// The generation of the running entry of each key.
        var live: [String: UInt64] = [:]
        var sequence: UInt64 = 0
        /// Work tasks started whose body has not returned yet (a finished entry's task may still be
        /// running: cancelled, on its way out).
        var runningTasks = 0
        /// Set by ``close()``: new work is refused.
        var isClosed = false
        /// Those waiting for no work to run (a shutdown).
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        /// The idle waiters to resume, when no entry runs and no task is left.
        mutating func takeIdleWaitersIfIdle() -> [CheckedContinuation<Void, Never>] {
            guard live.isEmpty, runningTasks == 0, !idleWaiters.isEmpty else { return [] }
            defer { idleWaiters.removeAll() }
            return idleWaiters
        }

        /// Drops `generation` from the live table once it no longer runs, and forgets it once settled.
        /// - Returns: the idle waiters to resume, when no work runs any more.
        mutating func tidy(_ generation: UInt64) -> [CheckedContinuation<Void, Never>] {
            guard let entry = entries[generation] else { return [] }
            if entry.work.isFinished, live[entry.key] == generation { live[entry.key] = nil }
            if entry.work.isSettled { entries[generation] = nil }
            checkInvariants()
            return takeIdleWaitersIfIdle()
        }

        func checkInvariants() {
            #if DEBUG
            for (key, generation) in live {
                precondition(entries[generation].map { $0.key == key && !$0.work.isFinished } == true,
                             "LoadCoalescer: a live key without its running entry")
            }
            #endif
        }
    }

    private let state = Mutex(State())

    /// Whether any work is under way.
    var isRunning: Bool { state.withLock { !$0.live.isEmpty } }

    /// The callers waiting on the work for `key` (for tests and diagnostics).
    func callerCount(forKey key: String) -> Int {
        state.withLock { state in state.live[key].flatMap { state.entries[$0]?.work.callerCount } ?? 0 }
    }

    /// Waits for the work of `key`, starting `work` if none is under way.
    /// - Parameters:
    ///   - cancellation: what this caller gets when its task is cancelled or the work is cancelled.
    ///   - refusal: what this caller gets once the coalescer is closed (``close()``).
    ///   - joined: called (before waiting) with whether this caller joined work under way.
    ///   - executor: where `work` runs when this call starts it; `nil`: the global concurrent executor.
    /// - Throws: the work's error, `cancellation`, or `refusal`.
    func run(key: String, cancellation: WebImageError, refusal: WebImageError, events: EventHandler?, joined: (Bool) -> Void,
             executor: (any TaskExecutor)? = nil, work: @escaping Work) async throws(WebImageError) -> Success {
        let registered = state.withLock { state -> (UInt64, UInt64, Bool)? in
            guard !state.isClosed else { return nil }
            state.sequence += 1
            let id = state.sequence
            if let generation = state.live[key], state.entries[generation]?.work.reserve(id) == true {
                return (generation, id, false)
            }
            state.sequence += 1
            var entry = Entry(key: key, cancellation: cancellation)
            _ = entry.work.reserve(id)
            state.entries[state.sequence] = entry
            state.live[key] = state.sequence
            state.runningTasks += 1   // counted now, so that no idle waiter wakes before the task starts
            return (state.sequence, id, true)
        }
        guard let (generation, id, starts) = registered else { throw refusal }
        joined(!starts)
        if starts { start(work, generation: generation, executor: executor) }
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: Continuation) in
                    let (action, idle) = state.withLock { state in
                        let action = state.entries[generation]!.work.attach(
                            id, Waiter(continuation: continuation, events: events, cancellation: cancellation))
                        return (action, state.tidy(generation))
                    }
                    for waiter in idle { waiter.resume() }
                    if case .resume(let outcome) = action {
                        // Work cancelled for everyone records one caller's cancellation; each gets its own.
                        continuation.resume(with: outcome.mapError { error -> any Error in
                            if case .cancelled = error { return cancellation }
                            return error
                        })
                    }
                }
            } onCancel: {
                self.leave(id, generation: generation, cancellation: cancellation)
            }
        } catch let error as WebImageError {
            throw error
        } catch {
            throw cancellation   // a continuation is only ever resumed with a WebImageError
        }
    }

    /// Cancels all work; every waiting caller gets the cancellation error of the work it waits for.
    func cancelAll() {
        let (cancelled, idle) = state.withLock { state in
            var cancelled: [(waiters: [Waiter], failure: WebImageError, task: Task<Void, Never>?)] = []
            var idle: [CheckedContinuation<Void, Never>] = []
            for generation in Array(state.live.values) {
                guard let entry = state.entries[generation] else { continue }
                if case .resume(let waiters) = state.entries[generation]!.work.finish(.failure(entry.cancellation)) {
                    cancelled.append((waiters, entry.cancellation, entry.task))
                }
                idle += state.tidy(generation)
            }
            return (cancelled, idle)
        }
        for waiter in idle { waiter.resume() }
        for entry in cancelled {
            entry.task?.cancel()
            for waiter in entry.waiters { waiter.continuation.resume(throwing: waiter.cancellation) }
        }
    }

    /// Refuses new work from now on (callers get their `refusal`); work under way goes on.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    /// Returns once no work runs and every work task has returned (at once if none does). Not
    /// cancellable: a shutdown waits for its loads to end.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                if state.live.isEmpty && state.runningTasks == 0 { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    private func start(_ work: @escaping Work, generation: UInt64, executor: (any TaskExecutor)?) {
        let task = Task(executorPreference: executor) {
            let outcome: Result<Success, WebImageError>
            do throws(WebImageError) {
                outcome = .success(try await work { [weak self] event in self?.emit(event, generation: generation) })
            } catch {
                outcome = .failure(error)
            }
            self.finish(generation: generation, with: outcome)
            self.taskEnded()
        }
        let stillWanted = state.withLock { state -> Bool in
            guard state.entries[generation]?.work.isFinished == false else { return false }
            state.entries[generation]!.task = task
            return true
        }
        if !stillWanted { task.cancel() }
    }

    private func taskEnded() {
        let idle = state.withLock { state in
            state.runningTasks -= 1
            return state.takeIdleWaitersIfIdle()
        }
        for waiter in idle { waiter.resume() }
    }

    private func leave(_ id: SharedWork<Waiter, Success, WebImageError>.ID, generation: UInt64, cancellation: WebImageError) {
        typealias Taken = (action: SharedWork<Waiter, Success, WebImageError>.LeaveAction, task: Task<Void, Never>?,
                           idle: [CheckedContinuation<Void, Never>])
        let (action, task, idle) = state.withLock { state -> Taken in
            guard state.entries[generation] != nil else { return (.none, nil, []) }
            let action = state.entries[generation]!.work.leave(id, cancellation: cancellation)
            let task = state.entries[generation]!.task
            return (action, task, state.tidy(generation))
        }
        for waiter in idle { waiter.resume() }
        switch action {
        case .none:
            break
        case .resume(let waiter):
            waiter.continuation.resume(throwing: cancellation)
        case .resumeAndAbandon(let waiter):
            waiter.continuation.resume(throwing: cancellation)
            task?.cancel()
        case .abandon:
            task?.cancel()
        }
    }

    private func emit(_ event: ImageLoadEvent, generation: UInt64) {
        let handlers = state.withLock { state in state.entries[generation]?.work.waiters.compactMap(\.events) ?? [] }
        for handler in handlers { handler(event) }
    }

    private func finish(generation: UInt64, with outcome: Result<Success, WebImageError>) {
        let (action, idle) = state.withLock { state -> (SharedWork<Waiter, Success, WebImageError>.FinishAction, [CheckedContinuation<Void, Never>]) in
            guard state.entries[generation] != nil else { return (.none, []) }
            let action = state.entries[generation]!.work.finish(outcome)
            return (action, state.tidy(generation))
        }
        for waiter in idle { waiter.resume() }
        if case .resume(let waiters) = action {
            for waiter in waiters {
                waiter.continuation.resume(with: outcome.mapError { error -> any Error in
                    if case .cancelled = error { return waiter.cancellation }
                    return error
                })
            }
        }
    }
}
