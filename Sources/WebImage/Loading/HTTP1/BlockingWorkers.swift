import CSystemTuning
import Foundation

/// Threads of their own for blocking jobs (sockets), never the cooperative pool's. A job goes to an
/// idle thread, else to a new one while there are fewer than `maxThreads`, else waits for the first
/// thread free. A thread idle for `idleLifetime` ends. So a stalled job holds one thread, not the
/// others' turns, and a quiet process keeps no threads.
///
/// An idle thread waits on a ``WakeChannel`` of its own (a pipe), not on the lock's condition, so
/// that whoever hands it a job knows which thread it wakes, and can place that thread on its own
/// CPU first (``runOnIdleThread(_:)``).
///
/// `@unchecked Sendable`: `jobs`, `head`, `threads`, `idle`, `placements` and the channels' `placed`
/// are only touched with `lock` held.
package final class BlockingWorkers: @unchecked Sendable {
    private let lock = NSLock()
    /// Jobs not yet taken start at `head`; a taken job's slot is emptied at once, so that what its
    /// closure holds (a download's bytes) goes when the job ends, not when the queue next drains.
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var threads = 0
    /// The idle threads' channels, the most recently idle last (woken first: its caches are warm,
    /// and the others reach their idle lifetime and end).
    private var idle: [WakeChannel] = []
    private let name: String
    private let maxThreads: Int
    private let idleLifetime: Duration

    /// - Parameters:
    ///   - name: the threads are named `name-N`.
    ///   - maxThreads: at most this many at once.
    ///   - idleLifetime: a thread idle this long ends.
    package init(name: String, maxThreads: Int, idleLifetime: TimeInterval = 30) {
        self.name = name
        self.maxThreads = max(1, maxThreads)
        self.idleLifetime = .seconds(idleLifetime)
    }

    /// Runs `job` on a thread that is idle now, and returns true; false (nothing is run) when every
    /// thread is busy or already has a job waiting. For a caller that must not become the parent of
    /// a new thread: on Linux a thread starts with its creator's nice value and CPU affinity, and a
    /// `nice 10` server thread (``ThreadPoolExecutor``'s) would leave its own weight to the thread
    /// it makes, for good (an unprivileged thread cannot lower its nice value again).
    ///
    /// A caller with a work CPU (a server's cold thread, which then waits for the job) has the
    /// thread woken on the CPU it is on now, where the thread runs as soon as the caller waits
    /// (`wi_thread_place_here`, CSystemTuning: left to itself the scheduler woke it on the other
    /// cold thread's CPU, behind a codec, while this one idled). The thread takes its other CPUs
    /// back as soon as it is woken.
    package func runOnIdleThread(_ job: @escaping @Sendable () -> Void) -> Bool {
        lock.lock()
        guard let channel = idle.popLast() else {
            lock.unlock()
            return false
        }
        jobs.append(job)
        // Placed before the wake-up: a thread placed after it would already be queued elsewhere.
        channel.placed = wi_thread_place_here(channel.threadID) == 1
        if channel.placed { placements += 1 }
        lock.unlock()
        channel.wake()   // after unlocking: the woken thread may run at once on this CPU, and takes the lock first thing
        return true
    }

    /// Runs `job` on one of the threads.
    package func run(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        jobs.append(job)
        let channel = idle.popLast()
        let starts = channel == nil && threads < maxThreads
        if starts { threads += 1 }
        let number = threads
        lock.unlock()
        channel?.wake()
        if starts {
            let threadName = "\(name)-\(number)"
            let thread = Thread { [self] in
                _ = threadName.withCString { wi_thread_set_name($0) }   // Thread.name set from outside does not reach the kernel on Linux
                loop()
            }
            thread.start()
        }
    }

    /// The number of threads waiting for a job (for tests).
    var idleThreadCount: Int { lock.withLock { idle.count } }

    /// How many hand-offs placed their thread on the caller's CPU (for tests).
    var placedHandOffs: Int { lock.withLock { placements } }
    private var placements = 0

    private func loop() {
        // No descriptor left for a channel: the thread runs what is queued and ends instead of
        // idling (a later job starts a thread again).
        let channel = WakeChannel()
        wi_thread_remember_cpus()
        lock.lock()
        while true {
            if head < jobs.count {
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
                lock.unlock()
                job?()
                lock.lock()
                continue
            }
            guard let channel else { break }
            idle.append(channel)
            lock.unlock()
            // Blocks only these workers' own threads.
            var woken = channel.wait(timeout: idleLifetime)
            lock.lock()
            if !woken {
                if let index = idle.firstIndex(where: { $0 === channel }) {
                    idle.remove(at: index)
                    if head == jobs.count { break }
                } else {
                    // A waker took the channel just as the time ran out: its byte is on the way.
                    lock.unlock()
                    woken = channel.wait(timeout: nil)
                    lock.lock()
                }
            }
            // Woken by a waker (which took the channel off `idle`): a placed thread takes its CPUs
            // back before anything else.
            if woken && channel.placed {
                channel.placed = false
                lock.unlock()
                wi_thread_release_placement()
                lock.lock()
            }
        }
        threads -= 1
        lock.unlock()
    }
}
