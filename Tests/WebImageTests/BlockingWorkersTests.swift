import CSystemTuning
import Foundation
import Synchronization
import Testing
@testable import WebImage

/// ``BlockingWorkers``: jobs on threads of their own, named `name-N`, and
/// ``BlockingWorkers/runOnIdleThread(_:)`` for callers that must never start a thread.
@Suite struct BlockingWorkersTests {
    /// The calling thread's name as the kernel has it (what `ps`, `top` and `perf` show).
    static func kernelThreadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The calling thread's identity.
    static func threadID() -> UInt { UInt(pthread_self()) }

    /// How long a wait here may take before the test gives up: generous (60 s, longer under
    /// ThreadSanitizer), as the whole suite on 2 cores right after a build once kept a new thread
    /// from running a trivial job for 10 s; a passing wait returns as soon as its job is done.
    static let patience = Double(60 * testTimeScale)

    /// Runs `job` through `submit` and waits (up to ``patience``) for what it returns.
    static func result<T: Sendable>(of job: @escaping @Sendable () -> T, _ submit: (@escaping @Sendable () -> Void) -> Void) -> T? {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<T?>(nil)
        submit {
            box.withLock { $0 = job() }
            done.signal()
        }
        guard done.wait(timeout: .now() + Self.patience) == .success else { return nil }
        return box.withLock { $0 }
    }

    @Test func threadsCarryTheirNamesInTheKernel() {
        let workers = BlockingWorkers(name: "wi.bw-name", maxThreads: 2)
        let name = Self.result(of: { Self.kernelThreadName() }) { workers.run($0) }
        #expect(name == "wi.bw-name-1")
    }

    /// With no thread, or none idle, nothing runs and the caller hears so; an idle thread takes the
    /// job at once, and a thread with a job already waiting for it does not count as idle.
    @Test func runOnIdleThreadNeverStartsAThread() {
        let workers = BlockingWorkers(name: "wi.bw-idle", maxThreads: 4)
        #expect(!workers.runOnIdleThread { Issue.record("ran with no thread at all") })

        let first = Self.result(of: { Self.threadID() }) { workers.run($0) }
        #expect(first != nil)
        // The thread goes idle once its job returned: wait for that.
        var second: UInt?
        let deadline = Date(timeIntervalSinceNow: Self.patience)
        while second == nil && Date() < deadline {
            let done = DispatchSemaphore(value: 0)
            let tid = Mutex<UInt>(0)
            if workers.runOnIdleThread({ tid.withLock { $0 = Self.threadID() }; done.signal() }) {
                #expect(done.wait(timeout: .now() + Self.patience) == .success)
                second = tid.withLock { $0 }
            } else {
                usleep(1000)
            }
        }
        #expect(second == first, "the idle thread took the job (no other thread was made)")

        // Busy: the one thread blocks in a job; an idle-only job is refused until it is free. The
        // thread is idle again first (it signalled before going back to wait): else `run` would
        // start a second thread for the job, and the first would take the idle-only one.
        let idleAgain = Date(timeIntervalSinceNow: Self.patience)
        while workers.idleThreadCount != 1 && Date() < idleAgain { usleep(1000) }
        #expect(workers.idleThreadCount == 1)
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let ranAfterwards = Mutex(false)
        workers.run {
            started.signal()
            release.wait()
        }
        #expect(started.wait(timeout: .now() + Self.patience) == .success)
        #expect(!workers.runOnIdleThread { ranAfterwards.withLock { $0 = true } })
        release.signal()
        usleep(20_000)
        #expect(!ranAfterwards.withLock { $0 }, "a refused job never runs")
    }

    /// A thread idle past its lifetime ends; the next job starts a thread again.
    @Test func anIdleThreadEndsAfterItsLifetimeAndANewOneTakesOver() {
        let workers = BlockingWorkers(name: "wi.bw-life", maxThreads: 2, idleLifetime: 1)
        #expect(Self.result(of: { 1 }) { workers.run($0) } == 1)
        var deadline = Date(timeIntervalSinceNow: Self.patience)
        while workers.idleThreadCount != 1 && Date() < deadline { usleep(1000) }
        #expect(workers.idleThreadCount == 1, "the thread waits for work")
        deadline = Date(timeIntervalSinceNow: Self.patience)
        while workers.idleThreadCount != 0 && Date() < deadline { usleep(10_000) }
        #expect(workers.idleThreadCount == 0, "and ends once its lifetime has passed")
        #expect(!workers.runOnIdleThread {}, "no thread is left to take a job")
        #expect(Self.result(of: { Self.kernelThreadName() }) { workers.run($0) } == "wi.bw-life-1")
    }

    /// The CPUs thread `thread` (a kernel id) may run on, as the kernel reports them.
    static func allowedCPUs(ofThread thread: Int32) throws -> Set<Int> { try AllowedCPUs.of(thread: thread) }

    /// Runs `body` on a thread of its own, given a work CPU first when `workCPU` (as a server's cold
    /// threads are), and returns what it returns.
    static func onThread<T: Sendable>(workCPU: Bool, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
            Thread {
                if workCPU { _ = wi_thread_set_work_cpu(0) }
                continuation.resume(returning: Result { try body() })
            }.start()
        }.get()
    }

    /// An idle worker that was started and has gone idle: its kernel id.
    static func idleWorker(_ workers: BlockingWorkers) -> Int32? {
        let tid = result(of: { wi_thread_id() }) { workers.run($0) }
        let deadline = Date(timeIntervalSinceNow: Self.patience)
        while workers.idleThreadCount != 1 && Date() < deadline { usleep(1000) }
        return workers.idleThreadCount == 1 ? tid : nil
    }

    /// A cold thread (one with a work CPU) that hands a job to an idle worker has the worker woken
    /// on its own CPU; the worker takes its CPUs back before the job runs. Any other caller's
    /// hand-off places nothing.
    @Test func aHandOffFromAColdThreadIsPlacedOnItsCPUAndReleasedBeforeTheJob() async throws {
        let process = try Self.allowedCPUs(ofThread: wi_thread_id())
        let workers = BlockingWorkers(name: "wi.bw-place", maxThreads: 1)
        let worker = try #require(Self.idleWorker(workers))

        let seen = try await Self.onThread(workCPU: true) { () -> Set<Int>? in
            Self.result(of: { try? Self.allowedCPUs(ofThread: wi_thread_id()) }) { job in
                #expect(workers.runOnIdleThread(job))
            } ?? nil
        }
        #expect(workers.placedHandOffs == 1)
        #expect(seen == process, "the placed worker had its CPUs back when the job ran")
        #expect(try Self.allowedCPUs(ofThread: worker) == process)

        let plain = try await Self.onThread(workCPU: false) { Self.result(of: { 1 }) { #expect(workers.runOnIdleThread($0)) } }
        #expect(plain == 1)
        #expect(workers.placedHandOffs == 1, "a caller without a work CPU places nothing")
    }

    /// What placing does to the sleeping thread: it may run on the placer's CPU alone until it
    /// releases the placement, which gives it back the CPUs it remembered.
    @Test func placingNarrowsASleepingThreadToThePlacersCPUUntilItReleases() async throws {
        let process = try Self.allowedCPUs(ofThread: wi_thread_id())
        let release = DispatchSemaphore(value: 0), remembered = DispatchSemaphore(value: 0)
        let sleeper = Mutex<Int32>(0), afterRelease = Mutex<Set<Int>>([])
        let finished = DispatchSemaphore(value: 0)
        Thread {
            wi_thread_remember_cpus()
            sleeper.withLock { $0 = wi_thread_id() }
            remembered.signal()
            release.wait()
            wi_thread_release_placement()
            afterRelease.withLock { $0 = (try? Self.allowedCPUs(ofThread: wi_thread_id())) ?? [] }
            finished.signal()
        }.start()
        #expect(remembered.wait(timeout: .now() + Self.patience) == .success)
        let target = sleeper.withLock { $0 }

        let unplaced = try await Self.onThread(workCPU: false) { wi_thread_place_here(target) }
        #expect(unplaced == 0, "a thread without a work CPU places nothing")
        #expect(try Self.allowedCPUs(ofThread: target) == process)

        let (placed, cpu) = try await Self.onThread(workCPU: true) { () -> (Int32, Int32) in
            // In a work section, so that the CPU it places on is its work CPU.
            let cpu = wi_thread_set_work_cpu(0)
            let began = wi_work_section_begin()
            defer { wi_work_section_end(began) }
            return (wi_thread_place_here(target), cpu)
        }
        #expect(placed == 1)
        #expect(try Self.allowedCPUs(ofThread: target) == [Int(cpu)])
        release.signal()
        #expect(finished.wait(timeout: .now() + Self.patience) == .success)
        #expect(afterRelease.withLock { $0 } == process)
    }
}
