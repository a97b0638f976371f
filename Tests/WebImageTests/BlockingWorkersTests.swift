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

    /// Runs `job` through `submit` and waits (up to 10 s) for what it returns.
    static func result<T: Sendable>(of job: @escaping @Sendable () -> T, _ submit: (@escaping @Sendable () -> Void) -> Void) -> T? {
        let done = DispatchSemaphore(value: 0)
        let box = Mutex<T?>(nil)
        submit {
            box.withLock { $0 = job() }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
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
        let deadline = Date(timeIntervalSinceNow: 10)
        while second == nil && Date() < deadline {
            let done = DispatchSemaphore(value: 0)
            let tid = Mutex<UInt>(0)
            if workers.runOnIdleThread({ tid.withLock { $0 = Self.threadID() }; done.signal() }) {
                #expect(done.wait(timeout: .now() + 10) == .success)
                second = tid.withLock { $0 }
            } else {
                usleep(1000)
            }
        }
        #expect(second == first, "the idle thread took the job (no other thread was made)")

        // Busy: the one thread blocks in a job; an idle-only job is refused until it is free.
        let release = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        let ranAfterwards = Mutex(false)
        workers.run {
            started.signal()
            release.wait()
        }
        #expect(started.wait(timeout: .now() + 10) == .success)
        #expect(!workers.runOnIdleThread { ranAfterwards.withLock { $0 = true } })
        release.signal()
        usleep(20_000)
        #expect(!ranAfterwards.withLock { $0 }, "a refused job never runs")
    }
}
