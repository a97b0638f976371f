import Foundation

/// Why a disk-cache operation failed. Memory-tier operations never fail.
public enum DiskCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The cache directory could not be created or opened.
    case directoryUnavailable(path: String, errno: Int32)
    /// Writing an entry failed (disk full, read-only file system, permissions...); nothing was left behind.
    case writeFailed(path: String, errno: Int32)
    /// Reading an entry that exists failed.
    case readFailed(path: String, errno: Int32)
    /// A cache other than ``ImageCache`` failed to store; the text is its error's description.
    case other(String)

    /// The system's error number (0 for ``other(_:)``).
    public var errno: Int32 {
        switch self {
        case .directoryUnavailable(_, let code), .writeFailed(_, let code), .readFailed(_, let code): code
        case .other: 0
        }
    }

    /// Whether the failure is a full disk (or quota), which a caller may treat as "cache off".
    public var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }

    /// A sentence a person can act on.
    public var description: String {
        let reason = String(cString: strerror(errno))
        return switch self {
        case .directoryUnavailable(let path, _): "cannot use the cache directory \(path): \(reason)"
        case .writeFailed(let path, _): "cannot write the cache file \(path): \(reason)"
        case .readFailed(let path, _): "cannot read the cache file \(path): \(reason)"
        case .other(let description): description
        }
    }
}
