import Foundation

/// The file name a disk-cache key is stored under, as SDWebImage names them: the MD5 of the key in
/// lower-case hex, plus the extension of the key's URL *path* (`…/a.jpg?x=1` → `.jpg`; dots that only
/// appear in the query give no extension). `\0` and `:` are stripped from the extension, and an
/// extension too long for a file name (over 222 bytes) is dropped.
enum DiskCacheFileName {
    /// NAME_MAX (255) minus the 32 hex digits and the dot.
    static let maxExtensionLength = 255 - 32 - 1

    static func make(forKey key: String) -> String {
        let hash = MD5.hex(Array(key.utf8))
        let pathExtension = Self.pathExtension(ofKey: key)
        return pathExtension.isEmpty ? hash : hash + "." + pathExtension
    }

    static func pathExtension(ofKey key: String) -> String {
        let raw = URL(string: key)?.pathExtension ?? plainPathExtension(key)
        let cleaned = raw.filter { $0 != "\0" && $0 != ":" && $0 != "/" }
        return cleaned.utf8.count > maxExtensionLength ? "" : cleaned
    }

    /// The extension of a key that is not a URL: what follows the last dot of its last `/`-separated
    /// part (none for a part that starts with its only dot). Not `NSString.pathExtension`, which
    /// traps in swift-corelibs-foundation on keys such as `//é` (found by fuzzing).
    static func plainPathExtension(_ key: String) -> String {
        guard let last = key.split(separator: "/").last, let dot = last.lastIndex(of: "."), dot != last.startIndex else {
            return ""
        }
        return String(last[last.index(after: dot)...])
    }

    /// The name without its extension (the MD5 alone), or nil when it has none.
    static func withoutExtension(_ name: String) -> String? {
        name.count > 32 ? String(name.prefix(32)) : nil
    }
}
