import Foundation
import Synchronization

/// Lets another thread end an exchange that a worker runs with blocking calls: cancelling shuts the
/// exchange's socket down (`shutdown(2)` does not block), which makes the worker's `poll`/`recv`
/// return at once. The worker closes a socket only after ``release()``, so a cancel never touches a
/// number the kernel has given to another connection.
package final class HTTP1Cancellation: Sendable {
    private struct State {
        var cancelled = false
        var fd: Int32?
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Records the socket in use; false when cancelled already (the worker then closes it and stops).
    package func adopt(_ fd: Int32) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.fd = fd
            return true
        }
    }

    /// The socket is no longer in use (the worker may close or keep it).
    package func release() {
        state.withLock { $0.fd = nil }
    }

    /// Cancels: the socket in use, if any, is shut down. Later calls do nothing more.
    package func cancel() {
        state.withLock { state in
            state.cancelled = true
            if let fd = state.fd { shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
