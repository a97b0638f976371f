import CSystemTuning
import Foundation

/// Where a server's cold work runs: the load, decode, transform and encode of a request that holds a
/// processing slot. A few threads of its own (one per core), each at a higher nice value than the
/// rest of the process (10 by default: the kernel then gives it about a tenth of a core's time
/// while another thread of nice 0 wants that core).
///
/// Why: a warm answer is microseconds of work, a cold one tens of milliseconds of codec work. On the
/// same threads at the same priority, a warm request that arrives while both cores decode waits a
/// scheduler slice or more (measured: p99 7.5 ms under cold load against 0.3 ms idle, with warm
/// answers already taken before any slot). Apart, and niced, the kernel runs the warm request's
/// thread (the server's request executor, at nice 0) first, and cold work uses whatever is left.
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
