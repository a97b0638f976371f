/// The state machine of one piece of work that several callers share: who waits for it, and its
/// outcome. "Join shared work; cancel it when the last caller leaves" — written once, used by the
/// manager's ``LoadCoalescer`` (loads) and the downloader's `DownloadOperation` (network fetches).
///
/// It is a value: its owner keeps it inside the state its own lock guards, calls one mutating
/// method per event under that lock, and performs the returned action (resuming continuations,
/// cancelling a task) after releasing the lock — the way swift-nio's and async-http-client's state
/// machines do. Nothing here blocks, suspends or calls out.
///
/// A caller goes through two steps, because the owner's lock cannot be held while Swift creates a
/// continuation:
///
/// 1. ``reserve(_:)``: under the owner's lock, when the caller finds (or creates) the work. A reserved
///    caller counts as wanting the work, so it cannot be abandoned in the gap before step 2.
/// 2. ``attach(_:_:)``: inside `withCheckedThrowingContinuation`, with the caller's waiter (its
///    continuation and whatever else the owner delivers to it).
///
/// A caller may ``leave(_:cancellation:)`` at any moment (its task was cancelled), even before it
/// attached. When the last caller that wants the work leaves, the work is *abandoned*: the machine
/// finishes it with the cancellation and tells the owner to stop the work. The first verdict wins:
/// a ``finish(_:)`` after another (or after abandonment) does nothing.
///
/// States: **running** (waiters attached, callers reserved, some reserved callers already gone)
/// → **finished** (an outcome; callers still reserved collect it when they attach). Invariants,
/// checked after every mutation in debug builds (``checkInvariants()``): an id is never both
/// attached and reserved; the callers that left early are reserved ones; a finished machine has no
/// attached waiter.
struct SharedWork<Waiter, Success, Failure: Error> {
    /// A caller's ticket: unique among the callers of one machine (the owner hands them out).
    typealias ID = UInt64

    private enum State {
        case running(waiters: [ID: Waiter])
        case finished(Result<Success, Failure>)
        /// Only inside ``updateWaiters(_:)``, so the dictionary is changed in place, not copied.
        case updating
    }

    private var state: State = .running(waiters: [:])
    /// Callers that reserved a place and have not attached yet.
    private var reserved: Set<ID> = []
    /// Reserved callers that left before attaching: their attach resumes them with the cancellation.
    private var leftEarly: [ID: Failure] = [:]

    init() {}

    // MARK: Events

    /// Reserves a place for a new caller `id`.
    /// - Returns: whether it has one: `false` once the work has finished or been abandoned (the
    ///   caller must start new work).
    mutating func reserve(_ id: ID) -> Bool {
        guard case .running(let waiters) = state else { return false }
        precondition(waiters[id] == nil && reserved.insert(id).inserted, "SharedWork: an id reserved twice")
        checkInvariants()
        return true
    }

    /// What the owner does after ``attach(_:_:)``.
    enum AttachAction {
        /// The waiter is registered: it is resumed by a later finish or leave.
        case wait
        /// Resume the waiter now with this outcome: the work finished before it attached, or the
        /// caller left before attaching (then the outcome is its cancellation).
        case resume(Result<Success, Failure>)
    }

    /// Registers the waiter of reserved caller `id`.
    mutating func attach(_ id: ID, _ waiter: Waiter) -> AttachAction {
        precondition(reserved.remove(id) != nil, "SharedWork: attach without a reservation")
        defer { checkInvariants() }
        if let failure = leftEarly.removeValue(forKey: id) {
            return .resume(.failure(failure))
        }
        switch state {
        case .finished(let outcome):
            return .resume(outcome)
        case .updating:
            preconditionFailure("SharedWork: re-entered while updating waiters")
        case .running(var waiters):
            waiters[id] = waiter
            state = .running(waiters: waiters)
            return .wait
        }
    }

    /// What the owner does after ``leave(_:cancellation:)``.
    enum LeaveAction {
        /// Nothing: the caller had its outcome already, or will get the cancellation when it attaches.
        case none
        /// Resume this waiter with the cancellation.
        case resume(Waiter)
        /// Resume this waiter with the cancellation, and stop the work: nobody wants it any more
        /// (the machine has finished it with the cancellation).
        case resumeAndAbandon(Waiter)
        /// Stop the work: the caller left before attaching and nobody else wants it (it gets the
        /// cancellation when it attaches).
        case abandon
    }

    /// Caller `id` stops waiting (its task was cancelled); it is resumed with `cancellation`.
    mutating func leave(_ id: ID, cancellation: Failure) -> LeaveAction {
        defer { checkInvariants() }
        guard case .running(var waiters) = state else {
            if reserved.contains(id) && leftEarly[id] == nil { leftEarly[id] = cancellation }
            return .none
        }
        if let waiter = waiters.removeValue(forKey: id) {
            state = .running(waiters: waiters)
            guard !isWanted else { return .resume(waiter) }
            state = .finished(.failure(cancellation))
            return .resumeAndAbandon(waiter)
        }
        guard reserved.contains(id), leftEarly[id] == nil else { return .none }
        leftEarly[id] = cancellation
        guard !isWanted else { return .none }
        state = .finished(.failure(cancellation))
        return .abandon
    }

    /// What the owner does after ``finish(_:)``.
    enum FinishAction {
        /// Nothing: the work had its verdict already.
        case none
        /// Resume every one of these waiters with the outcome.
        case resume([Waiter])
    }

    /// Records the work's outcome (the first verdict wins).
    mutating func finish(_ outcome: Result<Success, Failure>) -> FinishAction {
        guard case .running(let waiters) = state else { return .none }
        state = .finished(outcome)
        checkInvariants()
        return .resume(Array(waiters.values))
    }

    /// Changes every attached waiter in place (progress bookkeeping); nothing once finished.
    mutating func updateWaiters(_ body: (ID, inout Waiter) -> Void) {
        guard case .running(var waiters) = state else { return }
        state = .updating   // leaves `waiters` uniquely referenced
        for id in Array(waiters.keys) { body(id, &waiters[id]!) }
        state = .running(waiters: waiters)
    }

    // MARK: Questions

    /// The attached waiters (empty once finished).
    var waiters: [Waiter] {
        guard case .running(let waiters) = state else { return [] }
        return Array(waiters.values)
    }

    /// The outcome, once finished or abandoned.
    var outcome: Result<Success, Failure>? {
        guard case .finished(let outcome) = state else { return nil }
        return outcome
    }

    /// Whether the work has its verdict.
    var isFinished: Bool { outcome != nil }

    /// Whether some caller still wants the work: attached and waiting, or reserved and not gone.
    var isWanted: Bool {
        guard case .running(let waiters) = state else { return false }
        return !waiters.isEmpty || reserved.count > leftEarly.count
    }

    /// The callers waiting or about to (left callers excluded).
    var callerCount: Int {
        guard case .running(let waiters) = state else { return 0 }
        return waiters.count + reserved.count - leftEarly.count
    }

    /// Whether the owner may forget the machine: finished, and no reserved caller will come to
    /// collect the outcome.
    var isSettled: Bool { isFinished && reserved.isEmpty }

    // MARK: Invariants

    /// Traps (in debug builds only) when the state breaks a rule listed in the type's documentation.
    func checkInvariants() {
        #if DEBUG
        for id in leftEarly.keys { precondition(reserved.contains(id), "SharedWork: a caller left early without a reservation") }
        switch state {
        case .running(let waiters):
            for id in waiters.keys { precondition(!reserved.contains(id), "SharedWork: a caller both attached and reserved") }
        case .finished: break
        case .updating: preconditionFailure("SharedWork: left in the middle of updating waiters")
        }
        #endif
    }
}
