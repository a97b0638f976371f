import Foundation

/// How urgently a load should start when downloads queue up.
public enum DownloadPriority: Int, Sendable, Hashable, Comparable {
    /// Starts after every normal and high request (SDWebImage's `lowPriority`).
    case low = 0
    /// The default.
    case normal = 1
    /// Starts before every normal and low request (SDWebImage's `highPriority`).
    case high = 2

    /// Orders by urgency: `low < normal < high`.
    public static func < (lhs: DownloadPriority, rhs: DownloadPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
