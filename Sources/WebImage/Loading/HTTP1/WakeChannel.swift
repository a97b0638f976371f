import CSystemTuning
import Foundation

/// How one idle worker thread is woken: a pipe it waits on, which a waker writes one byte to.
///
/// Why one per thread and not a shared condition variable: the waker must know *which* thread its
/// job wakes, to place that thread on its own CPU first (``BlockingWorkers/runOnIdleThread(_:)``,
/// `wi_thread_place_here`); a condition's signal wakes any waiter. (A pipe write is also a
/// synchronous wake-up, `WF_SYNC`, the kernel's hint that the waker is about to block; measured
/// alone it did not move the worker: the scheduler ignores the hint for a thread woken by many
/// others, `wake_wide`, and woke it where it last ran, so the placement is what does it.)
///
/// The read end is blocking and waited on with `poll(2)`, bounded by a timeout; the write end is
/// non-blocking (a pipe holds 64 KiB and a channel carries one byte a wake-up, so it never fills).
/// Both are close-on-exec (set just after `pipe(2)`: the package starts no process of its own).
/// The pipe is closed when the last reference goes (its thread's, or a waker's after its write),
/// so a write never meets a closed or reused descriptor.
///
/// `@unchecked Sendable`: the descriptors and the thread id are immutable, the kernel serializes
/// the calls, and `placed` is only touched under its owner's lock (``BlockingWorkers``).
final class WakeChannel: @unchecked Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    /// The kernel id of the thread that waits on it (the thread that made it).
    let threadID = wi_thread_id()
    /// Whether the waker placed the thread on its own CPU (`wi_thread_place_here`), to be released
    /// by the thread once woken. Under the owner's lock.
    var placed = false

    /// A new channel for the calling thread, or nil when the process has no descriptors left (`pipe` failed).
    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }   // Glibc's module does not export pipe2
        readEnd = ends[0]
        writeEnd = ends[1]
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the waiting thread (or the next ``wait(timeout:)`` returns at once).
    func wake() {
        var byte: UInt8 = 1
        while write(writeEnd, &byte, 1) < 0 && errno == EINTR {}
    }

    /// Waits until ``wake()`` is called or `timeout` (nil: no limit) passes; true when woken (one
    /// wake-up consumed), false when the time ran out.
    func wait(timeout: Duration?) -> Bool {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            var milliseconds: Int32 = -1
            if let deadline {
                let left = deadline - .now
                guard left > .zero else { return false }
                milliseconds = left.pollMilliseconds
            }
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return false   // cannot happen with a valid descriptor: taken as the time running out
            }
            if ready == 0 { continue }   // the deadline is checked above
            var byte: UInt8 = 0
            if read(readEnd, &byte, 1) == 1 { return true }
        }
    }
}
