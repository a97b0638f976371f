import CColor
import Foundation

/// Finds the ICC profile embedded in encoded image bytes, without decoding them: JPEG `APP2
/// ICC_PROFILE` segments (joined in sequence order, wherever they sit before the scan), PNG `iCCP`
/// (inflated, at most ``maxProfileSize``), WebP `ICCP`, AVIF and HEIF `colr` boxes of type `prof`
/// (or `rICC`) among the item properties. Other formats, and damaged or incomplete
/// profiles, give `nil` (the pixels are then taken as sRGB).
enum ICCProfileReader {
    /// The largest profile read (real profiles are kilobytes; a CMYK one may reach a megabyte).
    static let maxProfileSize = 4 << 20

    /// Runs on every decode the manager makes, so it reads the bytes where they are: no copy of the
    /// file, only of the profile.
    static func profile(in data: Data) -> Data? {
        let format = ImageFormat(sniffing: data)
        guard [.jpeg, .png, .webp, .avif, .heic, .heif].contains(format) else { return nil }
        return data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return switch format {
            case .jpeg: jpegProfile(in: bytes)
            case .png: pngProfile(in: bytes)
            case .webp: webpProfile(in: bytes)
            default: isobmffProfile(in: bytes)
            }
        }
    }

    /// APP2 segments `ICC_PROFILE\0`, sequence number, count, then a piece of the profile.
    static func jpegProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let signature = Array("ICC_PROFILE".utf8) + [0]
        var pieces: [Int: Slice<UnsafeBufferPointer<UInt8>>] = [:]
        var expectedCount = 0
        var index = 2
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF { index += 1; continue }            // fill byte
            if marker == 0xD8 || (0xD0...0xD7).contains(marker) || marker == 0x01 { index += 2; continue }
            if marker == 0xDA || marker == 0xD9 { break }          // the scan: no header segment follows
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            guard length >= 2, index + 2 + length <= bytes.count else { return nil }
            let body = bytes[(index + 4)..<(index + 2 + length)]
            if marker == 0xE2, body.count > signature.count + 2, body.prefix(signature.count).elementsEqual(signature) {
                let sequence = Int(body[body.startIndex + signature.count])
                expectedCount = Int(body[body.startIndex + signature.count + 1])
                pieces[sequence] = body.dropFirst(signature.count + 2)
            }
            index += 2 + length
        }
        guard expectedCount > 0, pieces.count == expectedCount else { return nil }
        var profile = Data()
        for sequence in 1...expectedCount {
            guard let piece = pieces[sequence] else { return nil }
            profile.append(contentsOf: piece)
            if profile.count > maxProfileSize { return nil }
        }
        return profile
    }

    /// The `iCCP` chunk before `IDAT`: a name, a zero, the compression method (0), a zlib stream.
    static func pngProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        var index = 8
        while index + 8 <= bytes.count {
            let length = Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            let type = String(decoding: bytes[(index + 4)..<(index + 8)], as: UTF8.self)
            guard length >= 0, index + 12 + length <= bytes.count else { return nil }
            if type == "IDAT" || type == "IEND" { return nil }
            if type == "iCCP" {
                let body = bytes[(index + 8)..<(index + 8 + length)]
                guard let zero = body.firstIndex(of: 0), zero + 2 <= body.endIndex, body[zero + 1] == 0 else { return nil }
                let stream = Array(body[(zero + 2)...])
                var size = 0
                guard let inflated = stream.withUnsafeBufferPointer({ ccolor_inflate($0.baseAddress, $0.count, maxProfileSize, &size) })
                else { return nil }
                defer { free(inflated) }
                return Data(bytes: inflated, count: size)
            }
            index += 12 + length
        }
        return nil
    }

    /// RIFF `WEBP`, then chunks; an extended file (`VP8X`) may carry `ICCP` before the image data.
    static func webpProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        var index = 12
        while index + 8 <= bytes.count {
            let type = String(decoding: bytes[index..<(index + 4)], as: UTF8.self)
            let length = Int(bytes[index + 4]) | Int(bytes[index + 5]) << 8 | Int(bytes[index + 6]) << 16 | Int(bytes[index + 7]) << 24
            guard index + 8 + length <= bytes.count else { return nil }
            if type == "ICCP" {
                return length <= maxProfileSize ? Data(bytes[(index + 8)..<(index + 8 + length)]) : nil
            }
            if type == "VP8 " || type == "VP8L" || type == "ANMF" || type == "ALPH" { return nil }
            index += 8 + length + (length & 1)
        }
        return nil
    }

    /// AVIF and HEIF (ISO base media files): `meta` → `iprp` → `ipco` → `colr` with colour type
    /// `prof` or `rICC`, whose remaining bytes are the profile. Box sizes are checked against their
    /// parents; 64-bit sizes and "to the end" (0) are understood.
    static func isobmffProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        guard let meta = box("meta", in: bytes, 0..<bytes.count), meta.count >= 4,
              let iprp = box("iprp", in: bytes, (meta.lowerBound + 4)..<meta.upperBound),   // meta is a full box
              let ipco = box("ipco", in: bytes, iprp) else { return nil }
        var range = ipco
        while let colr = box("colr", in: bytes, range) {
            if colr.count > 4 {
                let type = String(decoding: bytes[colr.lowerBound..<(colr.lowerBound + 4)], as: UTF8.self)
                if type == "prof" || type == "rICC" {
                    return colr.count - 4 <= maxProfileSize ? Data(bytes[(colr.lowerBound + 4)..<colr.upperBound]) : nil
                }
            }
            range = colr.upperBound..<ipco.upperBound   // an nclx colr may come first
        }
        return nil
    }

    /// The payload range of the first box of `type` among the boxes that fill `range`.
    private static func box(_ type: String, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        var index = range.lowerBound
        while index + 8 <= range.upperBound {
            var size = Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            var header = 8
            if size == 1 {
                guard index + 16 <= range.upperBound else { return nil }
                size = bytes[(index + 8)..<(index + 16)].reduce(0) { $0 << 8 | Int($1) }
                header = 16
            } else if size == 0 {
                size = range.upperBound - index
            }
            guard size >= header, size <= range.upperBound - index else { return nil }
            if bytes[(index + 4)..<(index + 8)].elementsEqual(type.utf8) { return (index + header)..<(index + size) }
            index += size
        }
        return nil
    }
}
