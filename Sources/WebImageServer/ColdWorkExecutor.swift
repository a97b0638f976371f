import CSystemTuning
import Foundation

/// Where a server's cold work runs: the load, decode, transform and encode of a request that holds a
/// processing slot. A few threads of its own (one per core), each at a higher nice value than the
/// rest of the process (10 by default: the kernel then gives it about a tenth of a core's time
/// while another thread of nice 0 wants that core).
///
/// Why: a warm answer is microseconds of work, a cold one tens of milliseconds of codec work. Apart,
/// a warm request never waits in a queue behind cold jobs, and the process's cooperative pool stays
/// free for the embedding app; niced, the kernel prefers every other thread of the machine when
/// the cores are contended. Measured (`Benchmarks/serving/warm_under_load.py`, 2 cores): warm p99
/// under cold load 4.5–5.1 ms against 0.27 ms idle, the same at nice 0, 10 and 19, and 2.5 ms when
/// the cold load goes to another process: on two cores the rest is the machine's own contention
/// (the load generators, nginx, URLSession's and MHD's threads), not a queue of ours.
///
/// The cold work reaches these threads as the task executor preference of the slot holder's
/// `loadVariant` call, and through ``WebImage/WebImageContext/workExecutor`` the manager's shared
/// work tasks (which would otherwise start on the global executor: an unstructured task does not
/// inherit a preference). Default actors the work calls (the disk cache) run on it too. Nothing
/// on these threads blocks waiting for another job of this executor.
final class ColdWorkExecutor: TaskExecutor, @unchecked Sendable {
    /// One per process: its threads live as long as the process, shared by every server in it.
    static let shared = ColdWorkExecutor(threads: ProcessInfo.processInfo.activeProcessorCount, niceness: 10)

    /// `@unchecked Sendable`: `jobs` is only touched with `condition` locked; `threads` and
    /// `niceness` are set once in `init`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    let threadCount: Int
    let niceness: Int32

    private init(threads: Int, niceness: Int32) {
        threadCount = max(1, threads)
        self.niceness = niceness
        for index in 0..<threadCount {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "webimage.cold-\(index)"
            thread.start()
        }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// A thread's loop: take the oldest job, run it, forever (the executor is never released).
    private func work() {
        _ = wi_thread_set_nice(niceness)
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            // Blocks only this executor's own threads (started in `init`), never the cooperative pool's.
            while head == jobs.count { condition.wait() }
            let job = jobs[head]
            head += 1
            if head == jobs.count {   // drained: reuse the storage from the start
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= jobs.count {   // a long backlog: drop what was taken
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
