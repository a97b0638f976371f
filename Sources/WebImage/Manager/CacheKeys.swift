import Foundation

/// How cache keys are derived (SDWebImage's `SDThumbnailedKeyForKey` and `SDTransformedKeyForKey`).
enum CacheKeys {
    /// The key's separator before an inserted part.
    static let separator = "-"

    /// The part a thumbnail size adds: `Thumbnail(w,h,1)`, the last number 1 when the aspect ratio
    /// is kept, 0 when not.
    static func thumbnailPart(_ size: PixelSize, preservesAspectRatio: Bool) -> String {
        "Thumbnail(\(size.width),\(size.height),\(preservesAspectRatio ? 1 : 0))"
    }

    /// `key` with `-part` inserted before the path's extension (`a/image.png?x=1` becomes
    /// `a/image-part.png?x=1`, query and fragment kept), or appended when there is no extension.
    static func inserting(_ part: String, into key: String) -> String {
        // The path runs from after `scheme://authority` (if any) to the first `?` or `#`. Found by hand:
        // URLComponents percent-encodes keys with spaces or non-ASCII letters, so its ranges would
        // not index the key itself.
        let end = key.firstIndex { $0 == "?" || $0 == "#" } ?? key.endIndex
        var start = key.startIndex
        if let separator = key.range(of: "://"), separator.upperBound <= end {
            start = key[separator.upperBound..<end].firstIndex(of: "/") ?? end
        }
        let pathRange = start..<end
        let path = key[pathRange]
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[nameStart...].lastIndex(of: "."), dot > nameStart, path.index(after: dot) < path.endIndex {
            return String(key[..<dot]) + separator + part + String(key[dot...])
        }
        return key + separator + part
    }
}
