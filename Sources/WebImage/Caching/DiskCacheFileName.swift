import Foundation

/// The file name a disk-cache key is stored under, as SDWebImage names them: the MD5 of the key in
/// lower-case hex, plus the extension of the key's *path* (`…/a.jpg?x=1` → `.jpg`; dots that only
/// appear in the query give no extension). `\0`, `:` and `/` are stripped from the extension, raw
/// or percent-encoded (`jpg00%00` → `jpg00`, as SDWebImage), and an extension too long for a file
/// name (over 222 bytes) is dropped.
enum DiskCacheFileName {
    /// NAME_MAX (255) minus the 32 hex digits and the dot.
    static let maxExtensionLength = 255 - 32 - 1

    static func make(forKey key: String) -> String {
        let hash = MD5.hex(Array(key.utf8))
        let pathExtension = Self.pathExtension(ofKey: key)
        return pathExtension.isEmpty ? hash : hash + "." + pathExtension
    }

    /// The extension of the key's path: the query (`?…`) and fragment (`#…`) are cut off, and for a
    /// key with `://` so is the scheme and authority; then what follows the last dot of the last
    /// `/`-separated part (none for a part that starts with its only dot). Parsed by hand, on UTF-8
    /// bytes: Foundation's `URL.pathExtension` and `NSString.pathExtension` trap in
    /// swift-corelibs-foundation on keys such as `//é` or `file:v/…//…`, and Characters would hide a
    /// `/` followed by a combining mark inside one grapheme (both found by fuzzing).
    static func pathExtension(ofKey key: String) -> String {
        var path = Array(key.utf8)[...]
        if let end = path.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) { path = path[..<end] }
        if let scheme = path.firstRange(of: Array("://".utf8)) {
            let rest = path[scheme.upperBound...]
            path = rest.firstIndex(of: UInt8(ascii: "/")).map { rest[$0...] } ?? []
        }
        let cleaned = withoutForbiddenBytes(plainPathExtension(path))
        guard cleaned.count <= maxExtensionLength else { return "" }
        return String(decoding: cleaned, as: UTF8.self)
    }

    /// `bytes` without the bytes a file name must not have in its extension (NUL, `:`, `/`), whether
    /// they appear as themselves or percent-encoded (`%00`, `%3A`, `%2F`, either case).
    static func withoutForbiddenBytes(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        let forbidden: Set<UInt8> = [0, UInt8(ascii: ":"), UInt8(ascii: "/")]
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), bytes.endIndex - index >= 3,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]),
               forbidden.contains(high << 4 | low) {
                index += 3
                continue
            }
            if !forbidden.contains(byte) { kept.append(byte) }
            index += 1
        }
        return kept
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The UTF-8 bytes after the last dot of the last `/`-separated part of `path` (none for a part
    /// that starts with its only dot). Splitting at ASCII bytes keeps the pieces valid UTF-8.
    static func plainPathExtension(_ path: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let last = path.split(separator: UInt8(ascii: "/")).last ?? []
        guard let dot = last.lastIndex(of: UInt8(ascii: ".")), dot != last.startIndex else { return [] }
        return last[(dot + 1)...]
    }

    /// `plainPathExtension` for text, as a String.
    static func plainPathExtension(_ path: String) -> String {
        String(decoding: plainPathExtension(Array(path.utf8)[...]), as: UTF8.self)
    }

    /// The name without its extension (the MD5 alone), or nil when it has none.
    static func withoutExtension(_ name: String) -> String? {
        name.count > 32 ? String(name.prefix(32)) : nil
    }
}
