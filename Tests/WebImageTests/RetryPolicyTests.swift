import Foundation
import Testing
@testable import WebImage

@Suite struct RetryPolicyTests {
    let url = URL(string: "https://example.com/cat.png")!

    var timedOut: WebImageError { .timedOut(url: url) }

    @Test func theDefaultsAreThreeAttemptsHalfASecondThirtySecondsAndAFifthJitter() {
        let policy = RetryPolicy()
        #expect(policy.maxAttempts == 3)
        #expect(policy.initialDelay == .milliseconds(500))
        #expect(policy.maxDelay == .seconds(30))
        #expect(policy.jitter == 0.2)
    }

    @Test func withoutJitterDelaysDoubleFromTheInitialDelay() {
        let policy = RetryPolicy(maxAttempts: 5, jitter: 0)
        #expect(policy.delay(afterAttempt: 1, error: timedOut) == .milliseconds(500))
        #expect(policy.delay(afterAttempt: 2, error: timedOut) == .seconds(1))
        #expect(policy.delay(afterAttempt: 3, error: timedOut) == .seconds(2))
        #expect(policy.delay(afterAttempt: 4, error: timedOut) == .seconds(4))
    }

    @Test func withJitterEachDelayLiesBetweenItsJitteredFloorAndTheFullDelay() throws {
        let policy = RetryPolicy(maxAttempts: 4)   // jitter 0.2
        let bounds: [(floor: Duration, ceiling: Duration)] = [
            (.milliseconds(400), .milliseconds(500)),
            (.milliseconds(800), .seconds(1)),
            (.milliseconds(1600), .seconds(2)),
        ]
        var distinct = Set<Duration>()
        for _ in 0..<200 {
            for (index, bound) in bounds.enumerated() {
                let delay = try #require(policy.delay(afterAttempt: index + 1, error: timedOut))
                #expect(delay >= bound.floor && delay <= bound.ceiling, "attempt \(index + 1): \(delay)")
                if index == 0 { distinct.insert(delay) }
            }
        }
        // The jitter is random: 200 draws from a 100 ms range are not all the same.
        #expect(distinct.count > 1)
    }

    @Test func fullJitterRangesFromZeroToTheDelay() throws {
        let policy = RetryPolicy(maxAttempts: 2, initialDelay: .seconds(1), jitter: 1)
        for _ in 0..<100 {
            let delay = try #require(policy.delay(afterAttempt: 1, error: timedOut))
            #expect(delay >= .zero && delay <= .seconds(1))
        }
    }

    @Test func jitterIsClampedToZeroThroughOne() {
        #expect(RetryPolicy(jitter: 5).jitter == 1)
        #expect(RetryPolicy(jitter: -1).jitter == 0)
    }

    @Test func delaysAreCappedByMaxDelay() throws {
        let policy = RetryPolicy(maxAttempts: 10, initialDelay: .seconds(1), maxDelay: .seconds(5), jitter: 0)
        let delays = (1..<10).map { policy.delay(afterAttempt: $0, error: timedOut) }
        #expect(delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(5), .seconds(5), .seconds(5), .seconds(5),
                           .seconds(5), .seconds(5)])

        let jittered = RetryPolicy(maxAttempts: 10, initialDelay: .seconds(1), maxDelay: .seconds(5), jitter: 0.2)
        for attempt in 4..<10 {
            let delay = try #require(jittered.delay(afterAttempt: attempt, error: timedOut))
            #expect(delay >= .seconds(4) && delay <= .seconds(5), "attempt \(attempt): \(delay)")
        }
    }

    @Test func aVeryLateAttemptStaysCappedInsteadOfOverflowing() {
        let policy = RetryPolicy(maxAttempts: 1000, initialDelay: .seconds(1), maxDelay: .seconds(30), jitter: 0)
        #expect(policy.delay(afterAttempt: 64, error: timedOut) == .seconds(30))
        #expect(policy.delay(afterAttempt: 999, error: timedOut) == .seconds(30))
    }

    @Test func noRetryOnceMaxAttemptsAreUsed() {
        let policy = RetryPolicy(maxAttempts: 3, jitter: 0)
        #expect(policy.delay(afterAttempt: 2, error: timedOut) != nil)
        #expect(policy.delay(afterAttempt: 3, error: timedOut) == nil)
        #expect(policy.delay(afterAttempt: 4, error: timedOut) == nil)
        #expect(RetryPolicy(maxAttempts: 1).delay(afterAttempt: 1, error: timedOut) == nil)
    }

    @Test func transientErrorsAreRetried() {
        let policy = RetryPolicy(jitter: 0)
        let errors: [WebImageError] = [
            .timedOut(url: url),
            .transport(URLError(.networkConnectionLost), url: url),
            .truncatedResponse(received: 10, expected: 20, url: url),
            .badStatusCode(500, url: url),
            .badStatusCode(503, url: url),
            .badStatusCode(408, url: url),
            .badStatusCode(429, url: url),
        ]
        for error in errors {
            #expect(policy.delay(afterAttempt: 1, error: error) == .milliseconds(500), "\(error)")
        }
    }

    @Test func permanentErrorsAreNeverRetried() {
        let policy = RetryPolicy(maxAttempts: 10)
        let errors: [WebImageError] = [
            .badStatusCode(404, url: url),
            .badStatusCode(404, url: url, retryAfter: .seconds(3)),
            .badStatusCode(400, url: url),
            .decodingFailed(.corruptData(format: .png, reason: "bad CRC"), url: url),
            .emptyResponse(url: url),
            .blockedURL(url),
            .invalidURL(nil),
            .notInCache(url: url),
        ]
        for error in errors {
            #expect(policy.delay(afterAttempt: 1, error: error) == nil, "\(error)")
        }
        // Image data that ends early most likely lost its end on the network: worth another try.
        #expect(policy.delay(afterAttempt: 1, error: .decodingFailed(.truncatedData(format: .png), url: url)) != nil)
    }

    @Test func cancellationIsNeverRetriedThoughItCountsAsTransient() {
        let cancelled = WebImageError.cancelled(url: url)
        #expect(cancelled.isTransient)
        #expect(RetryPolicy(maxAttempts: 10).delay(afterAttempt: 1, error: cancelled) == nil)
    }

    @Test func retryAfterOnA503IsHonouredExactlyWithoutJitter() {
        let policy = RetryPolicy(jitter: 1)
        let error = WebImageError.badStatusCode(503, url: url, retryAfter: .seconds(7))
        #expect(policy.delay(afterAttempt: 1, error: error) == .seconds(7))
        #expect(policy.delay(afterAttempt: 2, error: error) == .seconds(7))
        #expect(policy.delay(afterAttempt: 1, error: .badStatusCode(429, url: url, retryAfter: .zero)) == .zero)
    }

    @Test func retryAfterIsCappedByMaxDelay() {
        let policy = RetryPolicy(maxDelay: .seconds(5))
        #expect(policy.delay(afterAttempt: 1, error: .badStatusCode(503, url: url, retryAfter: .seconds(7))) == .seconds(5))
    }

    @Test func retryAfterDoesNotExtendMaxAttempts() {
        let policy = RetryPolicy(maxAttempts: 2)
        #expect(policy.delay(afterAttempt: 2, error: .badStatusCode(503, url: url, retryAfter: .seconds(7))) == nil)
    }
}

extension RetryPolicyTests {
    /// `RetryAfter.duration(from:now:)`, which reads the header a 503 or 429 carries.
    @Suite struct RetryAfterHeader {
        /// Tue, 14 Nov 2023 22:13:20 GMT.
        let now = Date(timeIntervalSince1970: 1_700_000_000)

        @Test func delaySecondsAreRead() {
            #expect(RetryAfter.duration(from: "120", now: now) == .seconds(120))
            #expect(RetryAfter.duration(from: "0", now: now) == .zero)
            #expect(RetryAfter.duration(from: "  45 ", now: now) == .seconds(45))
        }

        @Test func anHTTPDateInTheFutureIsTheTimeUntilThen() {
            #expect(RetryAfter.duration(from: "Tue, 14 Nov 2023 22:14:50 GMT", now: now) == .seconds(90))
        }

        @Test func anHTTPDateInThePastIsZero() {
            #expect(RetryAfter.duration(from: "Tue, 14 Nov 2023 22:11:50 GMT", now: now) == .zero)
            #expect(RetryAfter.duration(from: "Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .zero)
        }

        @Test func garbageIsNil() {
            #expect(RetryAfter.duration(from: "soon", now: now) == nil)
            #expect(RetryAfter.duration(from: "", now: now) == nil)
            #expect(RetryAfter.duration(from: "12.5", now: now) == nil)
            #expect(RetryAfter.duration(from: "99999999999999999999999", now: now) == nil)
        }

        @Test func aNegativeNumberIsNil() {
            #expect(RetryAfter.duration(from: "-5", now: now) == nil)
        }

        // RFC 9110 §5.6.7: a recipient must accept all three HTTP-date formats.
        @Test func theObsoleteHTTPDateFormatsAreRead() {
            #expect(RetryAfter.duration(from: "Tuesday, 14-Nov-23 22:14:50 GMT", now: now) == .seconds(90))   // RFC 850
            #expect(RetryAfter.duration(from: "Tue Nov 14 22:14:50 2023", now: now) == .seconds(90))          // asctime
        }
    }
}
