/// Suspends until the calling task is cancelled (at once if it already is), holding no thread:
/// the body of a `run()` that has no background work of its own.
package func waitForCancellation() async {
    let gate = CancellationGate()
    await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in gate.wait(continuation) }
    } onCancel: {
        gate.open()
    }
}

import Synchronization

/// A continuation parked until ``open()``; opening before anyone waits makes the wait return at once.
private final class CancellationGate: Sendable {
    private let state = Mutex<(opened: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        let resumeNow = state.withLock { state in
            if state.opened { return true }
            state.waiter = continuation
            return false
        }
        if resumeNow { continuation.resume() }
    }

    func open() {
        let waiter = state.withLock { state in
            state.opened = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
