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
        var key = key
        return key.withUTF8 { bytes in
            let hash = MD5.hex(UnsafeRawBufferPointer(bytes))
            let pathExtension = Self.pathExtension(ofKeyBytes: bytes)
            return pathExtension.isEmpty ? hash : hash + "." + pathExtension
        }
    }

    /// The extension of the key's path: the query (`?…`) and fragment (`#…`) are cut off, and for a
    /// key with `://` so is the scheme and authority; then what follows the last dot of the last
    /// `/`-separated part (none for a part that starts with its only dot). Parsed by hand, on UTF-8
    /// bytes: Foundation's `URL.pathExtension` and `NSString.pathExtension` trap in
    /// swift-corelibs-foundation on keys such as `//é` or `file:v/…//…`, and Characters would hide a
    /// `/` followed by a combining mark inside one grapheme (both found by fuzzing).
    static func pathExtension(ofKey key: String) -> String {
        var key = key
        return key.withUTF8 { pathExtension(ofKeyBytes: $0) }
    }

    /// ``pathExtension(ofKey:)`` on the key's bytes, without allocating until the result.
    private static func pathExtension(ofKeyBytes bytes: UnsafeBufferPointer<UInt8>) -> String {
        let end = bytes.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.count
        var start = 0
        if let scheme = schemeSeparator(in: bytes, before: end) {
            start = bytes[(scheme + 3)..<end].firstIndex(of: UInt8(ascii: "/")) ?? end
        }
        let plain = plainPathExtensionRange(in: bytes, start..<end)
        let cleaned = withoutForbiddenBytes(bytes[plain])
        guard cleaned.count <= maxExtensionLength else { return "" }
        return String(decoding: cleaned, as: UTF8.self)
    }

    /// Where the first `://` before `end` starts.
    private static func schemeSeparator(in bytes: UnsafeBufferPointer<UInt8>, before end: Int) -> Int? {
        var index = 0
        while index + 3 <= end {
            if bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/") && bytes[index + 2] == UInt8(ascii: "/") {
                return index
            }
            index += 1
        }
        return nil
    }

    /// `bytes` without the bytes a file name must not have in its extension (NUL, `:`, `/`), whether
    /// they appear as themselves or percent-encoded (`%00`, `%3A`, `%2F`, either case).
    static func withoutForbiddenBytes<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> [UInt8] where Bytes.Index == Int {
        func isForbidden(_ byte: UInt8) -> Bool { byte == 0 || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/") }
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), bytes.endIndex - index >= 3,
               let high = HexDigits.value(bytes[index + 1]), let low = HexDigits.value(bytes[index + 2]),
               isForbidden(high << 4 | low) {
                index += 3
                continue
            }
            if !isForbidden(byte) { kept.append(byte) }
            index += 1
        }
        return kept
    }

    /// The range of the bytes after the last dot of the last non-empty `/`-separated part of
    /// `bytes[range]` (empty for a part that starts with its only dot). Splitting at ASCII bytes
    /// keeps the pieces valid UTF-8.
    private static func plainPathExtensionRange<Bytes: RandomAccessCollection<UInt8>>(in bytes: Bytes, _ range: Range<Int>) -> Range<Int>
    where Bytes.Index == Int {
        var end = range.upperBound
        while end > range.lowerBound && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }   // trailing slashes end no part
        var partStart = end
        while partStart > range.lowerBound && bytes[partStart - 1] != UInt8(ascii: "/") { partStart -= 1 }
        var dot = end
        while dot > partStart && bytes[dot - 1] != UInt8(ascii: ".") { dot -= 1 }
        // dot is one past the last '.', or partStart when there is none.
        guard dot > partStart + 1 else { return end..<end }   // no dot, or the part starts with its only dot
        return dot..<end
    }

    /// The extension of the last part of a plain path (no query, no scheme), as a String.
    static func plainPathExtension(_ path: String) -> String {
        var path = path
        return path.withUTF8 { bytes in
            String(decoding: bytes[plainPathExtensionRange(in: bytes, 0..<bytes.count)], as: UTF8.self)
        }
    }

    /// The name without its extension (the MD5 alone), or nil when it has none.
    static func withoutExtension(_ name: String) -> String? {
        name.count > 32 ? String(name.prefix(32)) : nil
    }
}
