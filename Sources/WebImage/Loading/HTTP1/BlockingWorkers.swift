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
            let thread = Thread { [self] in loop() }
            thread.name = "\(name)-\(number)"
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
