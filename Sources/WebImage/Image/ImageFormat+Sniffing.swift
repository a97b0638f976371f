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
        if ascii("ftyp", at: 4), b.count >= 12 { return isoBrandFormat(of: b) }
        if ascii("BM"), b.count >= 14 { return .bmp }
        // ICO and CUR: reserved 0, type 1 or 2, then a non-zero image count.
        if b.count >= 6, b[0] == 0, b[1] == 0, b[2] == 1 || b[2] == 2, b[3] == 0, b[4] != 0 || b[5] != 0 {
            return .ico
        }
        return nil
    }

    /// The format an ISO-BMFF `ftyp` box names: its major brand when that is specific (AVIF or
    /// HEVC), else the first specific compatible brand (AVIF writers often put `mif1` first), else
    /// plain HEIF for the generic image brands. Only the brands within the bytes at hand are read.
    private static func isoBrandFormat(of b: [UInt8]) -> ImageFormat? {
        func brand(at offset: Int) -> ImageFormat? {
            switch String(decoding: b[offset..<(offset + 4)], as: UTF8.self) {
            case "avif", "avis": .avif
            case "heic", "heix", "hevc", "hevx", "heim", "heis": .heic
            case "mif1", "msf1", "miaf", "heif": .heif
            default: nil
            }
        }
        let major = brand(at: 8)
        if let major, major != .heif { return major }
        let boxSize = Int(b[0]) << 24 | Int(b[1]) << 16 | Int(b[2]) << 8 | Int(b[3])
        let end = min(b.count, max(boxSize, 16))
        var compatible: [ImageFormat] = []
        var offset = 16
        while offset + 4 <= end {
            if let format = brand(at: offset) { compatible.append(format) }
            offset += 4
        }
        return compatible.first { $0 != .heif } ?? major ?? compatible.first
    }

    private static func looksLikeSVG<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Bool {
        // Text that starts (after an optional BOM and white space) with an XML tag and holds "<svg".
        let text = String(decoding: bytes, as: UTF8.self)
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        guard trimmed.first == "<" else { return false }
        return trimmed.range(of: "<svg", options: [.caseInsensitive]) != nil
    }
}
