import Foundation

/// Why a call to an S3-compatible store failed.
public enum S3Error: Error, Sendable, Hashable, CustomStringConvertible {
    /// The store answered `status` (with S3's error `code`, such as `NoSuchKey`, `AccessDenied`,
    /// `SlowDown`, when its body named one).
    case status(Int, code: String?)
    /// The connection failed or timed out (after the retries).
    case transport(String)
    /// The body ended before the length the store announced, or does not match its MD5 `ETag`:
    /// nothing of it is used.
    case truncated(received: Int, expected: Int)
    /// The breaker is open: the store failed too often lately and is skipped for a while.
    case unavailable
    /// An answer that could not be read (a listing that is not S3's XML).
    case malformed(String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .status(let status, let code): "the object store answered \(status)\(code.map { " \($0)" } ?? "")"
        case .transport(let reason): "the object store could not be reached: \(reason)"
        case .truncated(let received, let expected): "the object store's answer was cut short (\(received) of \(expected) bytes)"
        case .unavailable: "the object store is skipped for a while after failing repeatedly"
        case .malformed(let reason): "the object store's answer could not be read: \(reason)"
        }
    }

    /// Whether trying again may succeed: time-outs, connection failures, cut answers, 5xx, 429 and `SlowDown`.
    var isRetryable: Bool {
        switch self {
        case .status(let status, let code): status >= 500 || status == 429 || code == "SlowDown"
        case .transport, .truncated: true
        case .unavailable, .malformed: false
        }
    }
}
