import Foundation

/// Finds the EXIF block (a TIFF structure) of encoded image bytes without decoding them: JPEG's
/// `APP1 Exif\0\0` segment before the scan, PNG's `eXIf` chunk before `IDAT`, WebP's `EXIF` chunk.
/// Every read is bounds-checked and every walk moves forward; damaged containers give `nil`.
enum EXIFBlock {
    static func tiff(in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        switch ImageFormat(sniffing: Data(bytes.prefix(32))).descriptor?.metadataContainer {
        case .jpegSegments: jpeg(bytes)
        case .pngChunks: png(bytes)
        case .riffChunks: webp(bytes)
        default: nil
        }
    }

    private static func jpeg(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        let signature: [UInt8] = Array("Exif".utf8) + [0, 0]
        var segments = JPEGSegments(bytes)
        while let segment = segments.next() {
            let body = UnsafeRawBufferPointer(rebasing: bytes[segment.body])
            if segments.marker == 0xE1, body.count > signature.count, body.prefix(signature.count).elementsEqual(signature) {
                return UnsafeRawBufferPointer(rebasing: body[signature.count...])
            }
        }
        return nil
    }

    private static func png(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var chunks = PNGChunks(bytes)
        while let chunk = chunks.next() {
            if chunks.type(of: chunk, is: "eXIf") { return UnsafeRawBufferPointer(rebasing: bytes[chunk.body]) }
            if chunks.type(of: chunk, is: "IDAT") || chunks.type(of: chunk, is: "IEND") { return nil }
        }
        return nil
    }

    private static func webp(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var chunks = RIFFChunks(bytes)
        while let chunk = chunks.next() {
            guard chunks.type(of: chunk, is: "EXIF") else { continue }
            var tiff = UnsafeRawBufferPointer(rebasing: bytes[chunk.body])
            if tiff.starts(with: Array("Exif".utf8) + [0, 0]) { tiff = UnsafeRawBufferPointer(rebasing: tiff[6...]) }
            return tiff
        }
        return nil
    }
}
