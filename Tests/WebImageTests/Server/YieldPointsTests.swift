import CSystemTuning
import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// Yield points (CSystemTuning's `wi_yield_point`): a thread given an interval gives its core away
/// in long C loops, a thread without one never does, and the server's cold-work threads have one,
/// which a JPEG decode on them uses.
@Suite struct YieldPointsTests {
    /// Runs `body` on a thread of its own and returns what it returns.
    func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    @Test func aThreadWithAnIntervalYieldsAndOneWithoutNever() async {
        /// Yield points passed for 20 ms of a busy loop; the yields made.
        @Sendable func spin(interval: UInt32?) -> UInt {
            if let interval { wi_thread_set_yield_interval(interval) }
            let before = wi_thread_yield_count()
            let end = ContinuousClock.now + .milliseconds(20)
            while ContinuousClock.now < end { wi_yield_point() }
            return wi_thread_yield_count() - before
        }
        let yielded = await onThread { spin(interval: 100) }
        #expect(yielded >= 2, "20 ms of yield points at a 100 µs interval: \(yielded) yields")
        #expect(await onThread { spin(interval: nil) } == 0, "a thread without an interval never yields")
        #expect(await onThread { spin(interval: 0) } == 0, "an interval of 0 turns them off")
    }

    /// A 2000×1500 JPEG decoded on a cold-work thread passes the decoder's yield points (each batch of
    /// scanlines) and yields; the same decode on a request thread does not.
    @Test func coldWorkThreadsYieldInAJPEGDecode() async throws {
        let image = try Image(width: 2000, height: 1500, pixelFormat: .rgb8, pixels: [UInt8](repeating: 140, count: 2000 * 1500 * 3))
        let jpeg = try CoderRegistry.shared.encode(image, as: .jpeg, options: EncodeOptions(compressionQuality: 0.9))
        func yields(on executor: ThreadPoolExecutor) async throws -> UInt {
            try await withTaskExecutorPreference(executor) {
                let before = wi_thread_yield_count()
                _ = try CoderRegistry.shared.decode(jpeg)
                return wi_thread_yield_count() - before
            }
        }
        #expect(try await yields(on: .coldWork) > 0, "a cold thread's decode yields")
        #expect(try await yields(on: .requests) == 0, "a request thread's never does")
    }
}
