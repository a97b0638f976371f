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
        let pathRange: Range<String.Index>
        if let components = URLComponents(string: key), let range = components.rangeOfPath {
            pathRange = range
        } else {
            pathRange = key.startIndex..<(key.firstIndex { $0 == "?" || $0 == "#" } ?? key.endIndex)
        }
        let path = key[pathRange]
        let nameStart = path.lastIndex(of: "/").map { path.index(after: $0) } ?? path.startIndex
        if let dot = path[nameStart...].lastIndex(of: "."), dot > nameStart, path.index(after: dot) < path.endIndex {
            return String(key[..<dot]) + separator + part + String(key[dot...])
        }
        return key + separator + part
    }
}
