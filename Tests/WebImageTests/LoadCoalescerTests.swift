import Foundation
import Synchronization
import Testing
@testable import WebImage

/// One run of the work per key for every caller, cancellation per caller, and waiting for idle.
@Suite struct LoadCoalescerTests {
    let url = URL(string: "http://example.com/a.png")!

    @Test func callersOfOneKeyShareOneRunAndEachGetsItsResult() async throws {
        let coalescer = LoadCoalescer<Int>()
        let runs = Mutex(0)
        let release = Gate()
        let work: LoadCoalescer<Int>.Work = { _ in
            runs.withLock { $0 += 1 }
            await Task.detached { release.wait() }.value
            return 42
        }
        let cancellation = WebImageError.cancelled(url: url)
        async let first = coalescer.run(key: "k", cancellation: cancellation, refusal: .shutDown(url: url), events: nil, joined: { _ in }, work: work)
        try await waitUntil { coalescer.callerCount(forKey: "k") == 1 }
        async let second = coalescer.run(key: "k", cancellation: cancellation, refusal: .shutDown(url: url), events: nil, joined: { #expect($0) }, work: work)
        try await waitUntil { coalescer.callerCount(forKey: "k") == 2 }
        release.open()
        let results = try await [first, second]
        #expect(results == [42, 42])
        #expect(runs.withLock { $0 } == 1)
        #expect(!coalescer.isRunning)
    }

    @Test func theLastCallerLeavingCancelsTheWorkAndWaitUntilIdleReturns() async throws {
        let coalescer = LoadCoalescer<Int>()
        let sawCancellation = Mutex(false)
        let caller = Task {
            try await coalescer.run(key: "k", cancellation: .cancelled(url: url), refusal: .shutDown(url: url), events: nil, joined: { _ in }) { _ async throws(WebImageError) in
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(2)) }
                sawCancellation.withLock { $0 = true }
                throw .cancelled(url: url)
            }
        }
        try await waitUntil { coalescer.isRunning }
        caller.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await caller.value }
        await coalescer.waitUntilIdle()
        #expect(!coalescer.isRunning)
        try await waitUntil { sawCancellation.withLock { $0 } }
        #expect(sawCancellation.withLock { $0 }, "the work's task was cancelled")
    }

    @Test func cancelAllResumesEveryCallerWithItsCancellation() async throws {
        let coalescer = LoadCoalescer<Int>()
        let caller = Task {
            try await coalescer.run(key: "k", cancellation: .cancelled(url: url), refusal: .shutDown(url: url), events: nil, joined: { _ in }) { _ async throws(WebImageError) in
                try? await Task.sleep(for: busyMachineBound)   // until cancelled (a fixed 30 s ran out once under load)
                return 1
            }
        }
        try await waitUntil { coalescer.isRunning }
        coalescer.cancelAll()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await caller.value }
        await coalescer.waitUntilIdle()
    }
}

extension LoadCoalescerTests {
    @Test func aClosedCoalescerRefusesNewWorkAndIdleMeansEveryTaskHasReturned() async throws {
        let coalescer = LoadCoalescer<Int>()
        let bodyReturned = Mutex(false)
        let caller = Task {
            try await coalescer.run(key: "k", cancellation: .cancelled(url: url), refusal: .shutDown(url: url), events: nil,
                                    joined: { _ in }) { _ async throws(WebImageError) in
                try? await Task.sleep(for: busyMachineBound)   // until cancelled (a fixed 30 s ran out once under load)
                try? await Task.sleep(for: .milliseconds(50))   // still running after its outcome was decided
                bodyReturned.withLock { $0 = true }
                return 1
            }
        }
        try await waitUntil { coalescer.isRunning }
        coalescer.close()
        await #expect(throws: WebImageError.shutDown(url: url)) {
            try await coalescer.run(key: "other", cancellation: .cancelled(url: url), refusal: .shutDown(url: url), events: nil,
                                    joined: { _ in }) { _ async throws(WebImageError) in 2 }
        }
        coalescer.cancelAll()   // the outcome is decided now; the task's body goes on for 50 ms
        await #expect(throws: WebImageError.cancelled(url: url)) { try await caller.value }
        await coalescer.waitUntilIdle()
        #expect(bodyReturned.withLock { $0 }, "idle only once the work's task has returned")
    }
}
