import Foundation

/// Finds the EXIF block (a TIFF structure) of encoded image bytes without decoding them: JPEG's
/// `APP1 Exif\0\0` segment before the scan, PNG's `eXIf` chunk before `IDAT`, WebP's `EXIF` chunk.
/// Every read is bounds-checked and every walk moves forward; damaged containers give `nil`.
enum EXIFBlock {
    static func tiff(in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        switch ImageFormat(sniffing: Data(bytes.prefix(32))) {
        case .jpeg: jpeg(bytes)
        case .png: png(bytes)
        case .webp: webp(bytes)
        default: nil
        }
    }

    private static func jpeg(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let signature: [UInt8] = Array("Exif".utf8) + [0, 0]
        var index = 2
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { index += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: bytes[(index + 4)..<(index + 2 + length)])
            if marker == 0xE1, body.count > signature.count, body.prefix(signature.count).elementsEqual(signature) {
                return UnsafeRawBufferPointer(rebasing: body[signature.count...])
            }
            index += 2 + length
        }
        return nil
    }

    private static func png(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var offset = 8
        while offset + 8 <= bytes.count {
            let length = Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            let start = offset + 8
            guard start + length <= bytes.count else { return nil }
            switch (bytes[offset + 4], bytes[offset + 5], bytes[offset + 6], bytes[offset + 7]) {
            case (0x65, 0x58, 0x49, 0x66): return UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])   // eXIf
            case (0x49, 0x44, 0x41, 0x54), (0x49, 0x45, 0x4E, 0x44): return nil                                         // IDAT, IEND
            default: offset = start + length + 4
            }
        }
        return nil
    }

    private static func webp(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var offset = 12
        while offset + 8 <= bytes.count {
            let size = Int(bytes[offset + 4]) | Int(bytes[offset + 5]) << 8 | Int(bytes[offset + 6]) << 16 | Int(bytes[offset + 7]) << 24
            let start = offset + 8
            guard start + size <= bytes.count else { return nil }
            if bytes[offset..<(offset + 4)].elementsEqual("EXIF".utf8) {
                var tiff = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + size)])
                if tiff.starts(with: Array("Exif".utf8) + [0, 0]) { tiff = UnsafeRawBufferPointer(rebasing: tiff[6...]) }
                return tiff
            }
            offset = start + size + (size & 1)
        }
        return nil
    }
}
