/// How ``WebImageManager`` retries loads that failed for a transient reason (time-outs, connection
/// errors, 5xx, 408, 429): exponential backoff with jitter, honouring a server's `Retry-After`.
///
/// Off by default (``WebImageManagerConfig/retryPolicy`` is `nil`). Permanent failures and
/// cancellation are never retried.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; default 3.
    public var maxAttempts: Int
    /// The delay before the first retry; each later retry doubles it; default 0.5 seconds.
    public var initialDelay: Duration
    /// The longest delay between attempts, `Retry-After` included; default 30 seconds.
    public var maxDelay: Duration
    /// The fraction of each delay that is random (0 = none, 1 = anywhere from zero to the full
    /// delay), so that many clients do not retry in step; default 0.2.
    public var jitter: Double

    /// Creates a policy; every parameter defaults to the property's documented default.
    public init(maxAttempts: Int = 3, initialDelay: Duration = .milliseconds(500), maxDelay: Duration = .seconds(30),
                jitter: Double = 0.2) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The wait before attempt `attempt + 1` after `error` ended attempt `attempt` (1-based), or
    /// `nil` when the load should not be retried.
    public func delay(afterAttempt attempt: Int, error: WebImageError) -> Duration? {
        guard attempt < maxAttempts, error.isTransient else { return nil }
        if case .cancelled = error { return nil }
        if case .badStatusCode(_, _, let retryAfter?) = error { return min(retryAfter, maxDelay) }
        let exponent = min(attempt - 1, 30)
        let base = min(initialDelay * (1 << exponent), maxDelay)
        let randomPart = base * jitter * Double.random(in: 0...1)
        return base - base * jitter + randomPart
    }
}
