import Synchronization

/// Skips a node or store that keeps failing (Nygard's circuit breaker): after ``threshold`` failures in a row
/// it opens and every call fails at once for ``cooldown``; then one call goes through as a probe
/// (half-open): its success closes the breaker, its failure opens it for another cooldown.
package final class CircuitBreaker: Sendable {
    package enum Decision: Equatable {
        /// Go ahead (closed, or this call is the probe).
        case allow
        /// Fail at once: open, or a probe is already under way.
        case skip
    }

    private struct State {
        var consecutiveFailures = 0
        var openUntil: ContinuousClock.Instant?
        var probing = false
        var openings = 0
    }

    package let threshold: Int
    package let cooldown: Duration
    private let state = Mutex(State())

    package init(threshold: Int, cooldown: Duration) {
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
    }

    /// Whether a call may go to the node now; a call allowed while half-open is the probe and must
    /// report its outcome.
    package func decide(now: ContinuousClock.Instant = .now) -> Decision {
        state.withLock { state in
            guard let openUntil = state.openUntil else { return .allow }
            guard now >= openUntil, !state.probing else { return .skip }
            state.probing = true
            return .allow
        }
    }

    package func recordSuccess() {
        state.withLock { state in
            state.consecutiveFailures = 0
            state.openUntil = nil
            state.probing = false
        }
    }

    package func recordFailure(now: ContinuousClock.Instant = .now) {
        state.withLock { state in
            state.consecutiveFailures += 1
            guard state.probing || state.consecutiveFailures >= threshold else { return }
            if state.openUntil == nil || state.probing { state.openings += 1 }
            state.openUntil = now + cooldown
            state.probing = false
        }
    }

    /// Ends a probe without an outcome (it was never sent): the next call after the cooldown probes.
    package func endProbe() {
        state.withLock { $0.probing = false }
    }

    /// Whether calls are being skipped now.
    package var isOpen: Bool {
        state.withLock { state in state.openUntil.map { ContinuousClock.now < $0 || state.probing } ?? false }
    }

    /// How many times the breaker has opened.
    package var openings: Int { state.withLock { $0.openings } }
}
