import Foundation

/// Nanoseconds on the monotonic clock, as a plain `Int64` (a fixed-size value that keeps hot
/// structures free of resilient types such as `ContinuousClock.Instant`).
@usableFromInline
enum MonotonicClock {
    @inlinable
    static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }

    /// A duration in nanoseconds, saturating at `Int64.max`.
    @inlinable
    static func nanoseconds(of duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ attoseconds / 1_000_000_000
    }
}
