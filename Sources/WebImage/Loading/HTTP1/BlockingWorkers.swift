import CSystemTuning
import Foundation

/// Threads of their own for blocking jobs (sockets), never the cooperative pool's. A job goes to an
/// idle thread, else to a new one while there are fewer than `maxThreads`, else waits for the first
/// thread free. A thread idle for `idleLifetime` ends. So a stalled job holds one thread, not the
/// others' turns, and a quiet process keeps no threads.
///
/// `@unchecked Sendable`: `jobs`, `threads` and `idle` are only touched with `condition` locked.
package final class BlockingWorkers: @unchecked Sendable {
    private let condition = NSCondition()
    /// Jobs not yet taken start at `head`; a taken job's slot is emptied at once, so that what its
    /// closure holds (a download's bytes) goes when the job ends, not when the queue next drains.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var threads = 0
    private var idle = 0
    private let name: String
    private let maxThreads: Int
    private let idleLifetime: TimeInterval

    /// - Parameters:
    ///   - name: the threads are named `name-N`.
    ///   - maxThreads: at most this many at once.
    ///   - idleLifetime: a thread idle this long ends.
    package init(name: String, maxThreads: Int, idleLifetime: TimeInterval = 30) {
        self.name = name
        self.maxThreads = max(1, maxThreads)
        self.idleLifetime = idleLifetime
    }

    /// Runs `job` on a thread that is idle now, and returns true; false (nothing is run) when every
    /// thread is busy or already has a job waiting. For a caller that must not become the parent of
    /// a new thread: on Linux a thread starts with its creator's nice value and CPU affinity, and a
    /// `nice 10` server thread (``ThreadPoolExecutor``'s) would leave its own weight to the thread
    /// it makes, for good (an unprivileged thread cannot lower its nice value again).
    package func runOnIdleThread(_ job: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard idle > jobs.count - head else { return false }
        jobs.append(job)
        condition.signal()
        return true
    }

    /// Runs `job` on one of the threads.
    package func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        let starts = idle == 0 && threads < maxThreads
        if starts { threads += 1 }
        let number = threads
        condition.signal()
        condition.unlock()
        if starts {
            let threadName = "\(name)-\(number)"
            let thread = Thread { [self] in
                _ = threadName.withCString { wi_thread_set_name($0) }   // Thread.name set from outside does not reach the kernel on Linux
                loop()
            }
            thread.start()
        }
    }

    private func loop() {
        condition.lock()
        while true {
            while head == jobs.count {
                idle += 1
                // Blocks only these workers' own threads.
                let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
                idle -= 1
                if !signalled && head == jobs.count {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let job = jobs[head]
            jobs[head] = nil
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64 && head * 2 >= jobs.count {   // a queue that never drains: drop the taken slots
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job?()
            condition.lock()
        }
    }
}
