import Synchronization

/// A continuation resumed the first time only, from any thread: the one meeting point of "whichever
/// comes first" (a reply or a watchdog's time-out, one of two signals). Later calls are dropped.
package final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    /// Holds `continuation` until the first ``resume(returning:)``.
    package init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes the continuation with `value`; `false` when it was resumed already.
    @discardableResult
    package func resume(returning value: Value) -> Bool {
        guard let continuation = continuation.withLock({ held in defer { held = nil }; return held }) else { return false }
        continuation.resume(returning: value)
        return true
    }
}

extension ResumeOnce where Value == Void {
    /// Resumes the continuation; `false` when it was resumed already.
    @discardableResult
    package func resume() -> Bool { resume(returning: ()) }
}
