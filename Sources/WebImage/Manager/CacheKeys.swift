import Foundation

/// How cache keys are derived (SDWebImage's `SDThumbnailedKeyForKey` and `SDTransformedKeyForKey`).
enum CacheKeys {
    /// The key's separator before an inserted part.
    static let separator = "-"

    /// The part ``WebImageOptions/preserveColorProfile`` adds: pixels as the file stores them, not
    /// converted to sRGB.
    static let sourceColorPart = "ColorProfile(source)"

    /// The part ``WebImageOptions/preserveHighBitDepth`` adds: 16-bit pixels, not 8-bit ones.
    static let highBitDepthPart = "HighBitDepth"

    /// The part ``WebImageContext/appliesOrientation`` `false` adds: the stored pixels, not turned upright.
    static let unorientedPart = "Unoriented"

    /// The part ``WebImageContext/limits`` adds: every bound, so loads under different bounds never share.
    static func limitsPart(_ limits: ImageLimits) -> String {
        "Limits(\(limits.maxSourceBytes),\(limits.maxSourcePixels),\(limits.maxFrameCount),\(limits.maxAnimationBytes),\(limits.maxOutputPixels)"
            + (limits.maxDecodedFrames.map { ",frames \($0)" } ?? "") + ")"
    }

    /// The part a thumbnail size adds: `Thumbnail(w,h,1)`, the last number 1 when the aspect ratio
    /// is kept, 0 when not, `cover` when the thumbnail covers the box.
    static func thumbnailPart(_ size: PixelSize, preservesAspectRatio: Bool, coversBox: Bool = false) -> String {
        "Thumbnail(\(size.width),\(size.height),\(coversBox ? "cover" : preservesAspectRatio ? "1" : "0"))"
    }

    /// `key` with `-part` inserted before the path's extension (`a/image.png?x=1` becomes
    /// `a/image-part.png?x=1`, query and fragment kept), or appended when there is no extension.
    static func inserting(_ part: String, into key: String) -> String {
        // The path runs from after `scheme://authority` (if any) to the first `?` or `#`. Found by hand:
        // URLComponents percent-encodes keys with spaces or non-ASCII letters, so its ranges would
        // not index the key itself. Searched in the UTF-8 view: every delimiter is ASCII, so its
        // indices are also the string's, without the cost of walking grapheme clusters.
        let bytes = key.utf8
        let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        var start = bytes.startIndex
        if let scheme = Self.schemeSeparatorEnd(in: bytes, before: end) {
            start = bytes[scheme..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
        }
        let path = bytes[start..<end]
        let nameStart = path.lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? path.startIndex
        if let dot = bytes[nameStart..<end].lastIndex(of: UInt8(ascii: ".")), dot > nameStart, bytes.index(after: dot) < end {
            return String(key[..<dot]) + separator + part + String(key[dot...])
        }
        return key + separator + part
    }

    /// The index just after the first `://` that ends before `end`, or `nil`.
    private static func schemeSeparatorEnd(in bytes: String.UTF8View, before end: String.Index) -> String.Index? {
        var index = bytes.startIndex
        while index < end {
            if bytes[index] == UInt8(ascii: ":") {
                let slash1 = bytes.index(after: index)
                if slash1 < bytes.endIndex, bytes[slash1] == UInt8(ascii: "/") {
                    let slash2 = bytes.index(after: slash1)
                    if slash2 < bytes.endIndex, bytes[slash2] == UInt8(ascii: "/") {
                        let after = bytes.index(after: slash2)
                        return after <= end ? after : nil
                    }
                }
            }
            index = bytes.index(after: index)
        }
        return nil
    }
}
