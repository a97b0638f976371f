import Testing
@testable import WebImage

/// The shared-work state machine, driven by random sequences of reserve/attach/leave/finish against
/// an obviously correct model: a list of callers, each with one plain state.
@Suite struct SharedWorkTests {
    enum Failure: Error, Equatable {
        case cancelled(UInt64)
        case failed(Int)
    }

    /// The waiter is the caller's own id, so every resumption can be checked against the model.
    typealias Machine = SharedWork<UInt64, Int, Failure>

    /// What the model knows of one caller.
    enum Caller: Equatable {
        case reserved
        case leftEarly
        case attached
        case resumed(Result<Int, Failure>)
    }

    /// The model: plain values, no cleverness.
    struct Model {
        var callers: [UInt64: Caller] = [:]
        var outcome: Result<Int, Failure>?

        /// Callers that still want the work: attached, or reserved and not gone.
        var wanting: Int { callers.values.filter { $0 == .attached || $0 == .reserved }.count }
        var isSettled: Bool { outcome != nil && !callers.values.contains { $0 == .reserved || $0 == .leftEarly } }
    }

    @Test(arguments: 0..<300) func randomSequencesMatchTheModel(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var machine = Machine()
        var model = Model()
        var nextID: UInt64 = 0
        for _ in 0..<Int(random.next() % 40 + 1) {
            switch random.next() % 4 {
            case 0:
                nextID += 1
                let reserved = machine.reserve(nextID)
                #expect(reserved == (model.outcome == nil))
                if reserved { model.callers[nextID] = .reserved }
            case 1:
                guard let id = pick(from: model, where: { $0 == .reserved || $0 == .leftEarly }, &random) else { continue }
                let action = machine.attach(id, id)
                switch (model.callers[id]!, model.outcome) {
                case (.leftEarly, _):
                    #expect(resumed(action) == .failure(.cancelled(id)))
                    model.callers[id] = .resumed(.failure(.cancelled(id)))
                case (_, let outcome?):
                    #expect(resumed(action) == outcome)
                    model.callers[id] = .resumed(outcome)
                default:
                    #expect(resumed(action) == nil)
                    model.callers[id] = .attached
                }
            case 2:
                guard let id = pick(from: model, where: { _ in true }, &random) else { continue }
                let action = machine.leave(id, cancellation: .cancelled(id))
                expectLeave(action, id: id, model: &model)
            default:
                let outcome: Result<Int, Failure> = random.next() % 2 == 0 ? .success(Int(random.next() % 100)) : .failure(.failed(Int(random.next() % 100)))
                let action = machine.finish(outcome)
                if model.outcome == nil {
                    let attached = Set(model.callers.filter { $0.value == .attached }.keys)
                    guard case .resume(let waiters) = action else { Issue.record("a first finish resumes its waiters"); return }
                    #expect(Set(waiters) == attached && waiters.count == attached.count)
                    for id in attached { model.callers[id] = .resumed(outcome) }
                    model.outcome = outcome
                } else {
                    guard case .none = action else { Issue.record("a second verdict must do nothing"); return }
                }
            }
            machine.checkInvariants()
            #expect(machine.isFinished == (model.outcome != nil))
            #expect(machine.outcome == model.outcome)
            #expect(machine.isWanted == (model.outcome == nil && model.wanting > 0))
            #expect(machine.callerCount == (model.outcome == nil ? model.wanting : 0))
            #expect(machine.isSettled == model.isSettled)
            #expect(Set(machine.waiters) == Set(model.callers.filter { $0.value == .attached }.keys))
        }
        // Wind down: a verdict, then every caller still outside attaches. Each is resumed exactly once.
        if case .resume(let waiters) = machine.finish(.success(-1)) {
            for id in waiters { model.callers[id] = .resumed(.success(-1)) }
            model.outcome = model.outcome ?? .success(-1)
        }
        for (id, caller) in model.callers where caller == .reserved || caller == .leftEarly {
            guard case .resume(let outcome) = machine.attach(id, id) else { Issue.record("a late attach must resume"); return }
            #expect(outcome == (caller == .leftEarly ? .failure(.cancelled(id)) : model.outcome))
            model.callers[id] = .resumed(outcome)
        }
        #expect(model.callers.values.allSatisfy { if case .resumed = $0 { true } else { false } })
        #expect(machine.isSettled)
    }

    @Test func theLastCallerLeavingAbandonsTheWorkAndANewCallerIsRefused() {
        var machine = Machine()
        let reservedBoth = machine.reserve(1) && machine.reserve(2)
        #expect(reservedBoth)
        let attached = machine.attach(1, 1)
        #expect(attached.isWait)
        guard case .none = machine.leave(2, cancellation: .cancelled(2)) else { Issue.record("a reserved caller leaving is resumed when it attaches"); return }
        #expect(machine.isWanted, "caller 1 still waits")
        guard case .resumeAndAbandon(1) = machine.leave(1, cancellation: .cancelled(1)) else { Issue.record("the last caller abandons"); return }
        #expect(machine.outcome == .failure(.cancelled(1)))
        let reservedLate = machine.reserve(3)
        #expect(!reservedLate, "abandoned work takes no new caller")
        guard case .resume(.failure(.cancelled(2))) = machine.attach(2, 2) else { Issue.record("caller 2 gets its own cancellation"); return }
        #expect(machine.isSettled)
    }

    @Test func aCallerLeavingBeforeAttachingAloneAbandonsAtOnce() {
        var machine = Machine()
        let reserved = machine.reserve(1)
        #expect(reserved)
        guard case .abandon = machine.leave(1, cancellation: .cancelled(1)) else { Issue.record("nobody else wants it: abandon"); return }
        #expect(!machine.isSettled, "caller 1 has yet to collect its cancellation")
        guard case .resume(.failure(.cancelled(1))) = machine.attach(1, 1) else { Issue.record("attach resumes with the cancellation"); return }
        #expect(machine.isSettled)
    }

    private func pick(from model: Model, where matches: (Caller) -> Bool, _ random: inout SplitMix) -> UInt64? {
        let ids = model.callers.filter { matches($0.value) }.keys.sorted()
        return ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))]
    }

    private func resumed(_ action: Machine.AttachAction) -> Result<Int, Failure>? {
        if case .resume(let outcome) = action { return outcome }
        return nil
    }

    private func expectLeave(_ action: Machine.LeaveAction, id: UInt64, model: inout Model) {
        let caller = model.callers[id]!
        switch caller {
        case .attached:
            model.callers[id] = .resumed(.failure(.cancelled(id)))
            if model.wanting == 0 {
                guard case .resumeAndAbandon(id) = action else { Issue.record("the last waiter leaving abandons: \(action)"); return }
                model.outcome = .failure(.cancelled(id))
            } else {
                guard case .resume(id) = action else { Issue.record("a waiter leaving is resumed: \(action)"); return }
            }
        case .reserved:
            model.callers[id] = .leftEarly
            if model.outcome == nil && model.wanting == 0 {
                guard case .abandon = action else { Issue.record("the last reserved caller leaving abandons: \(action)"); return }
                model.outcome = .failure(.cancelled(id))
            } else {
                guard case .none = action else { Issue.record("a reserved caller leaving waits for its attach: \(action)"); return }
            }
        case .leftEarly, .resumed:
            guard case .none = action else { Issue.record("leaving twice, or after the outcome, does nothing: \(action)"); return }
        }
    }
}

extension SharedWork.AttachAction {
    var isWait: Bool { if case .wait = self { true } else { false } }
}
