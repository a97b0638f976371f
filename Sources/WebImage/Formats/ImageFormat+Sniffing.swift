import Foundation

extension ImageFormat {
    /// Recognises the format of `data` from its first bytes (its "magic number"), asking the detectors of
    /// ``ImageFormatRegistry/shared`` in order.
    ///
    /// Looks at no more than the first 1 KiB; never trusts a file name or a `Content-Type`.
    /// Returns ``unknown`` for bytes that match no format, including empty data. Never throws.
    ///
    /// - Parameter data: the start of an image file; a few dozen bytes are enough for every
    ///   binary format, SVG may need up to 1 KiB.
    public init<Bytes: DataProtocol>(sniffing data: Bytes) {
        self = ImageFormatRegistry.shared.format(detecting: Array(data.prefix(1024))) ?? .unknown
    }

    /// Whether `head` starts with `magic` at `offset`.
    static func bytes(_ head: [UInt8], start magic: [UInt8], at offset: Int = 0) -> Bool {
        head.count >= offset + magic.count && zip(head[offset...], magic).allSatisfy { $0 == $1 }
    }

    /// Whether `head` holds the ASCII `text` at `offset`.
    static func bytes(_ head: [UInt8], holdASCII text: String, at offset: Int = 0) -> Bool {
        bytes(head, start: Array(text.utf8), at: offset)
    }

    /// The format an ISO-BMFF `ftyp` box names: its major brand when that is specific (AVIF or
    /// HEVC), else the first specific compatible brand (AVIF writers often put `mif1` first), else
    /// plain HEIF for the generic image brands. Only the brands within the bytes at hand are read.
    static func isoBrandFormat(of b: [UInt8]) -> ImageFormat? {
        guard bytes(b, holdASCII: "ftyp", at: 4), b.count >= 12 else { return nil }
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

    /// Text that starts (after an optional BOM, white space, XML declarations and comments) with an XML
    /// tag and holds `<svg` within the bytes at hand.
    static func looksLikeSVG(_ head: [UInt8]) -> Bool {
        let text = String(decoding: head, as: UTF8.self)
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        guard trimmed.first == "<" else { return false }
        return trimmed.range(of: "<svg", options: [.caseInsensitive]) != nil
    }
}
