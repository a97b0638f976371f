/// Why the shared tier could not do something. The tier never lets one reach a load: a failed read
/// is a miss, a failed write leaves the entry local; ``RedisTierStatistics/errors`` counts them.
public enum RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server could not be reached, or refused the login (`AUTH`, `SELECT`).
    case connectionFailed(endpoint: String, reason: String)
    /// A command got no answer within ``RedisTierConfig/commandTimeout`` (or waited longer than that
    /// for a free connection).
    case timedOut(endpoint: String)
    /// The connection broke (reset, closed, unreadable reply) during a command.
    case connectionLost(endpoint: String, reason: String)
    /// The server answered with an error reply (`-OOM`, `-NOAUTH`, `-READONLY` …).
    case serverError(endpoint: String, message: String)
    /// The node is skipped: its circuit breaker is open after repeated failures, its queue is full,
    /// or the tier was closed.
    case unavailable(endpoint: String)

    /// A short description for logs.
    public var description: String {
        switch self {
        case .connectionFailed(let endpoint, let reason): "\(endpoint): cannot connect: \(reason)"
        case .timedOut(let endpoint): "\(endpoint): timed out"
        case .connectionLost(let endpoint, let reason): "\(endpoint): connection lost: \(reason)"
        case .serverError(let endpoint, let message): "\(endpoint): \(message)"
        case .unavailable(let endpoint): "\(endpoint): skipped (circuit open, queue full, or closed)"
        }
    }
}
