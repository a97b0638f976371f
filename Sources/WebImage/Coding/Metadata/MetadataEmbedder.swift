import CColor
import Foundation

/// Writes an ICC profile and an EXIF block into encoded JPEG, PNG and WebP bytes, at the places
/// their specifications give them, without re-encoding: JPEG `APP1 Exif` and `APP2 ICC_PROFILE`
/// segments after the JFIF header; PNG `iCCP` and `eXIf` chunks after `IHDR`; WebP `ICCP` after the
/// `VP8X` header (a simple file becomes an extended one) and `EXIF` at the end. AVIF writes both
/// through libavif (the AVIF coder), GIF has no place for either. Bytes that are not the container
/// they claim come back unchanged.
enum MetadataEmbedder {
    static func embed(colorProfile: Data?, exif: [UInt8]?, in data: Data, format: ImageFormat, canvas: PixelSize, hasAlpha: Bool) -> Data {
        guard colorProfile != nil || exif != nil else { return data }
        let profile = colorProfile.map { [UInt8]($0) }
        return switch format.descriptor?.metadataContainer {
        case .jpegSegments: jpeg(data, profile: profile, exif: exif) ?? data
        case .pngChunks: png(data, profile: profile, exif: exif) ?? data
        case .riffChunks: webp(data, profile: profile, exif: exif, canvas: canvas, hasAlpha: hasAlpha) ?? data
        default: data   // ISO-BMFF, TIFF and JPEG XL coders write their metadata through their libraries
        }
    }

    // MARK: JPEG

    /// The largest piece of a profile one `APP2` segment carries (65 535 less length, signature,
    /// sequence number and count).
    static let jpegProfilePiece = 65_535 - 2 - 12 - 2

    private static func jpeg(_ data: Data, profile: [UInt8]?, exif: [UInt8]?) -> Data? {
        let bytes = [UInt8](data)
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var insertAt = 2
        if bytes.count > 6, bytes[2] == 0xFF, bytes[3] == 0xE0 {   // after the JFIF APP0, which comes first
            insertAt = 4 + (Int(bytes[4]) << 8 | Int(bytes[5]))
            guard insertAt <= bytes.count else { return nil }
        }
        var segments: [UInt8] = []
        func segment(_ marker: UInt8, _ payload: [UInt8]) {
            let length = payload.count + 2
            segments += [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        }
        if let exif, exif.count <= 65_535 - 2 - 6 { segment(0xE1, Array("Exif".utf8) + [0, 0] + exif) }
        if let profile, !profile.isEmpty {
            let pieces = stride(from: 0, to: profile.count, by: jpegProfilePiece).map { profile[$0..<min($0 + jpegProfilePiece, profile.count)] }
            guard pieces.count <= 255 else { return nil }
            for (index, piece) in pieces.enumerated() {
                segment(0xE2, Array("ICC_PROFILE".utf8) + [0, UInt8(index + 1), UInt8(pieces.count)] + piece)
            }
        }
        return Data(bytes[..<insertAt] + segments + bytes[insertAt...])
    }

    // MARK: PNG

    private static func png(_ data: Data, profile: [UInt8]?, exif: [UInt8]?) -> Data? {
        let bytes = [UInt8](data)
        // The signature, then IHDR: 4 length + 4 type + 13 data + 4 CRC.
        guard bytes.count > 33, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        var chunks: [UInt8] = []
        func chunk(_ type: String, _ body: [UInt8]) {
            let typed = Array(type.utf8) + body
            let crc = typed.withUnsafeBufferPointer { ccolor_crc32(0, $0.baseAddress, $0.count) }
            chunks += bigEndian32(body.count) + typed + bigEndian32(Int(crc))
        }
        if let profile, !profile.isEmpty {
            var size = 0
            guard let compressed = profile.withUnsafeBufferPointer({ ccolor_deflate($0.baseAddress, $0.count, &size) }) else { return nil }
            defer { free(compressed) }
            chunk("iCCP", Array("ICC profile".utf8) + [0, 0] + [UInt8](UnsafeBufferPointer(start: compressed, count: size)))
        }
        if let exif { chunk("eXIf", exif) }
        return Data(bytes[..<33] + chunks + bytes[33...])
    }

    private static func bigEndian32(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    // MARK: WebP

    private static func webp(_ data: Data, profile: [UInt8]?, exif: [UInt8]?, canvas: PixelSize, hasAlpha: Bool) -> Data? {
        let bytes = [UInt8](data)
        guard bytes.count >= 20, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WEBP".utf8) else { return nil }
        func little32(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24 & 0xFF)] }
        func little24(_ value: Int) -> [UInt8] { Array(little32(value).prefix(3)) }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            Array(type.utf8) + little32(body.count) + body + (body.count & 1 == 1 ? [0] : [])
        }
        var header: [UInt8]
        var rest: [UInt8]
        if bytes[12..<16].elementsEqual("VP8X".utf8) {
            guard bytes.count >= 30 else { return nil }
            header = Array(bytes[12..<30])
            rest = Array(bytes[30...])
        } else {
            // A simple file (one VP8 or VP8L chunk) becomes an extended one around the same chunk.
            header = Array("VP8X".utf8) + little32(10) + [hasAlpha ? 0x10 : 0, 0, 0, 0]
                + little24(canvas.width - 1) + little24(canvas.height - 1)
            rest = Array(bytes[12...])
        }
        if profile != nil { header[8] |= 0x20 }
        if exif != nil { header[8] |= 0x08 }
        var body = Array("WEBP".utf8) + header
        if let profile, !profile.isEmpty { body += chunk("ICCP", profile) }
        body += rest
        if let exif { body += chunk("EXIF", exif) }
        return Data(Array("RIFF".utf8) + little32(body.count) + body)
    }
}
