import CSystemTuning
import Foundation
import Synchronization
import Testing
@testable import WebImage
import WebImageWebP
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
        /// Yield points passed for 20 ms of a busy loop (with an interval: until two yields, within 10 s, as a
        /// machine that takes the core away for most of 20 ms leaves one); the yields made.
        @Sendable func spin(interval: UInt32?) -> UInt {
            if let interval { wi_thread_set_yield_interval(interval) }
            let before = wi_thread_yield_count()
            let started = ContinuousClock.now
            while ContinuousClock.now < started + .milliseconds(20)
                || (interval ?? 0 > 0 && wi_thread_yield_count() - before < 2 && ContinuousClock.now < started + .seconds(10)) {
                wi_yield_point()
            }
            return wi_thread_yield_count() - before
        }
        let yielded = await onThread { spin(interval: 100) }
        #expect(yielded >= 2, "20 ms of yield points at a 100 µs interval: \(yielded) yields")
        #expect(await onThread { spin(interval: nil) } == 0, "a thread without an interval never yields")
        #expect(await onThread { spin(interval: 0) } == 0, "an interval of 0 turns them off")
    }

    /// A new work section (a new codec loop) reads the clock at its first yield point: the stride a
    /// loop of short steps learnt is not carried into the next loop, whose steps may be far longer.
    @Test func aWorkSectionStartsTheStrideAfresh() async {
        let (firstPoints, readings) = await onThread { () -> ([UInt], UInt) in
            wi_thread_set_yield_interval(200)
            _ = wi_thread_set_work_cpu(0)
            var firstPoints: [UInt] = []
            var readings: UInt = 0
            for _ in 0..<5 {
                // 2 ms of very short steps: the stride grows to its largest (64 points a reading).
                let before = wi_thread_yield_checks()
                var points: UInt = 0
                let end = ContinuousClock.now + .milliseconds(2)
                while ContinuousClock.now < end {
                    for _ in 0..<16 { wi_yield_point() }
                    points += 16
                }
                readings = max(readings, points / max(1, wi_thread_yield_checks() - before))
                // Then a new section's first point, wherever the countdown stood.
                let began = wi_work_section_begin()
                let checks = wi_thread_yield_checks()
                wi_yield_point()
                firstPoints.append(wi_thread_yield_checks() - checks)
                wi_work_section_end(began)
            }
            return (firstPoints, readings)
        }
        #expect(readings >= 8, "the short steps read the clock every \(readings) points")
        #expect(firstPoints == [1, 1, 1, 1, 1], "each section's first yield point reads the clock")
    }

    /// In a loop of very short steps the clock is read every few yield points, not at each, and the
    /// thread still yields at its interval.
    @Test func aTightLoopReadsTheClockEveryFewPoints() async {
        let (points, checks, yielded) = await onThread { () -> (UInt, UInt, UInt) in
            wi_thread_set_yield_interval(200)
            let checksBefore = wi_thread_yield_checks(), yieldsBefore = wi_thread_yield_count()
            // Until two yields and 10,000 points at least (about 20 ms on an idle core), bounded by 10 s: a
            // fixed 20 ms saw one yield when the machine took the thread's core away for most of it.
            var points: UInt = 0
            let end = ContinuousClock.now + .seconds(10) * testTimeScale
            while ContinuousClock.now < end && (points < 10_000 || wi_thread_yield_count() - yieldsBefore < 2) {
                for _ in 0..<16 { wi_yield_point() }
                points += 16
            }
            return (points, wi_thread_yield_checks() - checksBefore, wi_thread_yield_count() - yieldsBefore)
        }
        #expect(checks > 0 && checks * 8 <= points, "\(checks) clock readings for \(points) yield points")
        #expect(yielded >= 2, "at a 200 µs interval: \(yielded) yields in \(points) points")
    }

    /// A 2000×1500 JPEG decoded on a cold-work thread passes the decoder's yield points (each batch of
    /// scanlines) and yields; the same decode on a request thread does not.
    @Test func coldWorkThreadsYieldInAJPEGDecode() async throws {
        let image = try Image(width: 2000, height: 1500, pixelFormat: .rgb8, pixels: [UInt8](repeating: 140, count: 2000 * 1500 * 3))
        let jpeg = try CoderRegistry.shared.encode(image, as: .jpeg, options: EncodeOptions(compressionQuality: 0.9))
        func yields(on executor: ThreadPoolExecutor) async throws -> UInt {
            try await withTaskExecutorPreference(executor) {
                wi_yield_points_restart()   // as a work section starts (see the WebP test below)
                let before = wi_thread_yield_count()
                _ = try CoderRegistry.shared.decode(jpeg)
                return wi_thread_yield_count() - before
            }
        }
        #expect(try await yields(on: .coldWork) > 0, "a cold thread's decode yields")
        #expect(try await yields(on: .requests) == 0, "a request thread's never does")
    }

    /// A lossy WebP of more than 16 KiB is decoded a step of its bytes at a time, with a yield point
    /// between steps: the same pixels as one call, and a cold thread yields. Its bytes cut short are
    /// truncated data, as for one call.
    @Test func aLossyWebPIsDecodedInStepsThatYield() async throws {
        let webp = try WebPCoder().encode(try EncodeOptionsTests.photo(), as: .webp)
        try #require(webp.count > 16 * 1024, "\(webp.count) bytes: too few for steps")
        let (pixels, yielded) = try await withTaskExecutorPreference(ThreadPoolExecutor.coldWork) {
            // As a work section starts (the server's decodes run in one): the stride this cold thread
            // learnt in an earlier test could pass over the decode's few steps without a clock reading.
            wi_yield_points_restart()
            let before = wi_thread_yield_count()
            let image = try WebPCoder().decode(webp)
            return (image.rgbaSHA256(), wi_thread_yield_count() - before)
        }
        #expect(yielded > 0)
        #expect(pixels == (try WebPCoder().decode(webp)).rgbaSHA256(), "the same pixels on a thread without yield points")
        #expect(throws: ImageCodingError.truncatedData(format: .webp)) { try WebPCoder().decode(webp.prefix(webp.count * 2 / 3)) }
    }
}
