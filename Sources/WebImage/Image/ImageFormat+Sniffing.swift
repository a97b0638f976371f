import Foundation

extension ImageFormat {
    /// Recognises the format of `data` from its first bytes (its "magic number").
    ///
    /// Looks at no more than the first 1 KiB; never trusts a file name or a `Content-Type`.
    /// Returns ``unknown`` for bytes that match no format, including empty data. Never throws.
    ///
    /// - Parameter data: the start of an image file; a few dozen bytes are enough for every
    ///   binary format, SVG may need up to 1 KiB.
    public init<Bytes: DataProtocol>(sniffing data: Bytes) {
        var head = [UInt8](repeating: 0, count: 0)
        head.reserveCapacity(32)
        for byte in data.prefix(32) { head.append(byte) }
        if let format = ImageFormat.binaryFormat(of: head) {
            self = format
        } else if ImageFormat.looksLikeSVG(data.prefix(1024)) {
            self = .svg
        } else {
            self = .unknown
        }
    }

    private static func binaryFormat(of b: [UInt8]) -> ImageFormat? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            b.count >= offset + magic.count && zip(b[offset...], magic).allSatisfy { $0 == $1 }
        }
        func ascii(_ text: String, at offset: Int = 0) -> Bool { starts(Array(text.utf8), at: offset) }

        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if ascii("GIF87a") || ascii("GIF89a") { return .gif }
        if ascii("RIFF") && ascii("WEBP", at: 8) { return .webp }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if ascii("%PDF-") { return .pdf }
        if ascii("ftyp", at: 4), b.count >= 12 {
            switch String(decoding: b[8..<12], as: UTF8.self) {
            case "heic", "heix", "hevc", "hevx", "heim", "heis": return .heic
            case "mif1", "msf1", "heif": return .heif
            case "avif", "avis": return .avif
            default: return nil
            }
        }
        if ascii("BM"), b.count >= 14 { return .bmp }
        // ICO and CUR: reserved 0, type 1 or 2, then a non-zero image count.
        if b.count >= 6, b[0] == 0, b[1] == 0, b[2] == 1 || b[2] == 2, b[3] == 0, b[4] != 0 || b[5] != 0 {
            return .ico
        }
        return nil
    }

    private static func looksLikeSVG<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        // Text that starts (after an optional BOM and white space) with an XML tag and holds "<svg".
        let text = String(decoding: bytes, as: UTF8.self)
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        guard trimmed.first == "<" else { return false }
        return trimmed.range(of: "<svg", options: [.caseInsensitive]) != nil
    }
}
