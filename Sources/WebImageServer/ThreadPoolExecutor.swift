import CSystemTuning
import Foundation
import Synchronization
import WebImage

/// A task executor on a few threads of its own, started once and kept for the life of the process
/// (shared by every server in it). The server has two, so that where its work runs does not depend
/// on the process's other pools:
///
/// - ``requests``: each request's task that libmicrohttpd's thread could not answer at once (see
///   ``HTTPServer``) — the disk lookup (the disk cache's actor runs on its caller's executor),
///   `/metrics`, `/info`, 429s and building the answer. Its threads keep the process's priority,
///   and are answered while the cooperative pool is saturated by the embedding app. An image
///   request starts on a cold thread instead when one waits for work and is free for it
///   (``ImageRequestHandler/dispatch(_:)``): the cold request that it usually is then skips the
///   hop to a request thread and back.
/// - ``coldWork``: a processing slot holder's cold work — the load, decode, transform, encode and
///   store — at nice 10 (the kernel then gives it about a tenth of a core while a thread of nice 0
///   wants that core). Cold work reaches it as the task executor preference of the slot holder's
///   `loadVariant` call, and through ``WebImage/WebImageContext/workExecutor`` the manager's shared
///   work tasks (an unstructured task does not inherit a preference).
///
/// A thread's nice value is inherited by every thread it creates, and an unprivileged thread cannot
/// lower it again. So both pools are started by a thread of normal priority (``ImageServer``'s
/// initialiser touches both, requests first); threads that a cold thread creates — libdispatch's
/// workers, a codec's helper threads — may inherit nice 10, and nothing that answers a warm request
/// runs on those. (Before these pools, the request tasks ran on libdispatch's workers, which were
/// often created by a cold thread and so ran at its priority.)
///
/// Each cold thread has a CPU of its own (the N-th thread the N-th CPU the process may run on), and
/// runs its codecs' work — decodes, transforms, encodes — pinned to it (work sections:
/// `wi_thread_set_work_cpu`, CSystemTuning; the rest of its time it runs where the scheduler puts
/// it, so that threads it creates, libdispatch's workers among them, do not inherit one CPU). Left
/// to the scheduler, the two cold threads of a 2-core server often shared one core while the other
/// idled: at nice 10 they weigh a tenth of a nice-0 thread in its load balance, and a thread that
/// ran within the last half millisecond is "cache hot" and is not pulled to an idle core. `perf
/// sched` over a cold JPEG run: 15 % of the cores idle with two requests always in flight, most of
/// it in idle spans of 2–10 ms (a whole decode); with the threads pinned, 6–7 %.
///
/// Measured with `Benchmarks/serving/warm_under_load.py` (2 cores): nice 10 gave the lowest warm
/// p99 under cold load (1.5–1.7 ms, against 1.9 at nice 19, 2.3 at nice 0, 2.6–3.1 in Linux's
/// `SCHED_IDLE` policy, which also cost 8 % of cold throughput). What was left was the scheduler's:
/// `perf sched` showed runnable threads of nice 0 (libmicrohttpd's, the client's) waiting up to a
/// 4 ms tick while cold threads held both cores, because a kernel without preemption
/// (`Dynamic Preempt: none`) does not preempt a running thread for a woken one. So the cold
/// threads also give their core away every ``yieldIntervalMicroseconds`` at the yield points of the
/// C loops they run (`wi_yield_point`, CSystemTuning): a waiting thread then runs within about that
/// long (cold JPEG: warm p99 0.19–0.28 ms under cold load, against 1.8–2.4 ms without). A long C
/// call without yield points (libdeflate's inflate of a whole PNG, libwebp's decode, libavif's)
/// still holds its core until the tick.
///
/// Nothing on these threads blocks waiting for another job of the same executor.
final class ThreadPoolExecutor: TaskExecutor, @unchecked Sendable {
    /// The server's request tasks: `max(2, cores)` threads of normal priority.
    static let requests = ThreadPoolExecutor(name: "webimage.req", threads: max(2, ProcessInfo.processInfo.activeProcessorCount),
                                             lowered: false)
    /// Cold work: one thread per core, at nice ``loweredNiceness``.
    static let coldWork = ThreadPoolExecutor(name: "webimage.cold", threads: ProcessInfo.processInfo.activeProcessorCount,
                                             lowered: true)

    /// `@unchecked Sendable`: `jobs` is only touched with `condition` locked; the rest is set once in `init`.
    private let condition = NSCondition()
    private var jobs = FIFOBuffer<UnownedJob>()
    /// Threads waiting for a job.
    private var waiting = 0
    /// How many threads run its jobs.
    let threadCount: Int
    /// How often a lowered pool's threads give their core away at the yield points of the C loops
    /// they run (`wi_yield_point`: a JPEG's scanlines, the resampler's rows, PNG's row filters,
    /// libwebp's encoding progress), in microseconds. `warm_under_load.py` (2 cores, cold JPEG): warm
    /// p99 under cold load 1.2–2.0× idle at 200 µs with a real-time client (13.5–16.7× with none),
    /// cold results/s unchanged (145–152 against 151); 100 and 50 µs were no better and cost up to
    /// 8 % of cold throughput.
    static let yieldIntervalMicroseconds: UInt32 = 200

    /// The scheduling slice of the threads that answer (a pool that is not lowered, and
    /// libmicrohttpd's threads of the normal class), in nanoseconds: 100 µs, against the kernel's
    /// default of 0.75 ms × (1 + log₂ cores) (1.4 ms on 2 cores). EEVDF lets a running thread finish
    /// its slice before a woken one of the same class runs (RUN_TO_PARITY), unless the woken one's
    /// slice is shorter (PREEMPT_SHORT, Linux 6.12): a libmicrohttpd thread woken for a warm request
    /// waited behind a cold thread's codec for up to its whole slice. `perf sched`, 2 cores saturated
    /// with cold JPEG: that thread's wake-up to running p99 207 → 71 µs. Cold throughput unchanged
    /// within noise. Older kernels take the setting and ignore it (`wi_thread_set_slice`).
    static let answeringSlice: UInt64 = 100_000

    /// The nice value of a lowered pool's threads.
    static let loweredNiceness: Int32 = 10

    private let loweredThreads = Mutex(0)
    private let workCPUByThread = Mutex<[Int: Int32]>([:])

    /// Whether every one of its threads runs at ``loweredNiceness`` (`false` where the platform
    /// refused, or while a thread has not started yet).
    var isLowered: Bool { loweredThreads.withLock { $0 } == threadCount }

    /// The CPU each thread of a lowered pool runs its work sections on, by thread index (a thread is
    /// missing while it has not started, or where that is unavailable); empty for a pool that is not
    /// lowered.
    var workCPUs: [Int: Int32] { workCPUByThread.withLock { $0 } }

    /// Starts `threads` threads named `name-N` (each lowers itself to ``loweredNiceness``, sets
    /// its yield interval and its work CPU when `lowered`, before its first job). Returns without waiting for them: `init` may run on a
    /// thread of the cooperative pool (an `ImageServer` made in a task), which must never block.
    /// The threads are never stopped: the server's pools are ``requests`` and ``coldWork``, made once.
    init(name: String, threads: Int, lowered: Bool) {
        threadCount = max(1, threads)
        for index in 0..<threadCount {
            let thread = Thread { [unowned self] in
                // Linux names a thread from the thread itself (`pthread_setname_np`, 15 bytes).
                _ = "\(name)-\(index)".withCString { wi_thread_set_name($0) }
                if lowered, wi_thread_set_nice(Self.loweredNiceness) == 1 { loweredThreads.withLock { $0 += 1 } }
                if lowered { wi_thread_set_yield_interval(Self.yieldIntervalMicroseconds) } else { _ = wi_thread_set_slice(UInt(Self.answeringSlice)) }
                if lowered, case let cpu = wi_thread_set_work_cpu(Int32(index)), cpu >= 0 {
                    workCPUByThread.withLock { $0[index] = cpu }
                }
                work()
            }
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

    /// Whether a thread waits for work with no job queued before it: a job enqueued now starts at
    /// once, unless another job is enqueued first.
    var hasIdleThread: Bool {
        condition.lock()
        defer { condition.unlock() }
        return waiting > jobs.count
    }

    /// A thread's loop: take the oldest job, run it, forever (the executor is never released).
    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            // Blocks only this executor's own threads (started in `init`), never the cooperative pool's.
            var next = jobs.popFirst()
            while next == nil {
                waiting += 1
                condition.wait()
                waiting -= 1
                next = jobs.popFirst()
            }
            condition.unlock()
            guard let job = next else { continue }
            job.runSynchronously(on: executor)
        }
    }
}
