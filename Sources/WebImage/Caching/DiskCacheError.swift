import Foundation

/// Why a disk-cache operation failed. Memory-tier operations never fail.
public enum DiskCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The cache directory could not be created or opened.
    case directoryUnavailable(path: String, errno: Int32)
    /// Writing an entry failed (disk full, read-only file system, permissions...); nothing was left behind.
    case writeFailed(path: String, errno: Int32)
    /// Reading an entry that exists failed.
    case readFailed(path: String, errno: Int32)

    /// The system's error number.
    public var errno: Int32 {
        switch self {
        case .directoryUnavailable(_, let code), .writeFailed(_, let code), .readFailed(_, let code): code
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
        }
    }
}
