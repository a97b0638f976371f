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
        let container = ImageFormat(sniffing: data).descriptor?.metadataContainer ?? .none
        return data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return switch container {
            case .jpegSegments: jpegProfile(in: bytes)
            case .pngChunks: pngProfile(in: bytes)
            case .riffChunks: webpProfile(in: bytes)
            case .isoBoxes: isobmffProfile(in: bytes)
            case .tiffTags, .jxlBoxes, .none: nil   // their coders read the profile through libtiff and libjxl
            }
        }
    }

    /// APP2 segments `ICC_PROFILE\0`, sequence number, count, then a piece of the profile.
    static func jpegProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let raw = UnsafeRawBufferPointer(bytes)
        let signature = Array("ICC_PROFILE".utf8) + [0]
        var pieces: [Int: Slice<UnsafeRawBufferPointer>] = [:]
        var expectedCount = 0
        var segments = JPEGSegments(raw)
        while let segment = segments.next() {
            let body = raw[segment.body]
            if segments.marker == 0xE2, body.count > signature.count + 2, body.prefix(signature.count).elementsEqual(signature) {
                let sequence = Int(body[body.startIndex + signature.count])
                expectedCount = Int(body[body.startIndex + signature.count + 1])
                pieces[sequence] = body.dropFirst(signature.count + 2)
            }
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
        let raw = UnsafeRawBufferPointer(bytes)
        var chunks = PNGChunks(raw)
        while let chunk = chunks.next() {
            if chunks.type(of: chunk, is: "IDAT") || chunks.type(of: chunk, is: "IEND") { return nil }
            guard chunks.type(of: chunk, is: "iCCP") else { continue }
            let body = bytes[chunk.body]
            guard let zero = body.firstIndex(of: 0), zero + 2 <= body.endIndex, body[zero + 1] == 0 else { return nil }
            let stream = Array(body[(zero + 2)...])
            var size = 0
            guard let inflated = stream.withUnsafeBufferPointer({ ccolor_inflate($0.baseAddress, $0.count, maxProfileSize, &size) })
            else { return nil }
            defer { free(inflated) }
            return Data(bytes: inflated, count: size)
        }
        return nil
    }

    /// RIFF `WEBP`, then chunks; an extended file (`VP8X`) may carry `ICCP` before the image data.
    static func webpProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        var chunks = RIFFChunks(UnsafeRawBufferPointer(bytes))
        while let chunk = chunks.next() {
            if chunks.type(of: chunk, is: "ICCP") {
                return chunk.body.count <= maxProfileSize ? Data(bytes[chunk.body]) : nil
            }
            if ["VP8 ", "VP8L", "ANMF", "ALPH"].contains(where: { chunks.type(of: chunk, is: $0) }) { return nil }
        }
        return nil
    }

    /// AVIF and HEIF (ISO base media files): `meta` → `iprp` → `ipco` → `colr` with colour type
    /// `prof` or `rICC`, whose remaining bytes are the profile. Box sizes are checked against their
    /// parents; 64-bit sizes and "to the end" (0) are understood (``ISOBoxes``).
    static func isobmffProfile(in bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let raw = UnsafeRawBufferPointer(bytes)
        guard let meta = ISOBoxes.first("meta", in: raw), meta.count >= 4,
              let iprp = ISOBoxes.first("iprp", in: raw, (meta.lowerBound + 4)..<meta.upperBound),   // meta is a full box
              let ipco = ISOBoxes.first("ipco", in: raw, iprp) else { return nil }
        var boxes = ISOBoxes(raw, in: ipco)
        while let box = boxes.next() {
            let colr = box.body
            guard boxes.type(of: box, is: "colr"), colr.count > 4 else { continue }   // an nclx colr may come first
            if raw.hasType("prof", at: colr.lowerBound) || raw.hasType("rICC", at: colr.lowerBound) {
                return colr.count - 4 <= maxProfileSize ? Data(bytes[(colr.lowerBound + 4)..<colr.upperBound]) : nil
            }
        }
        return nil
    }
}
