import Foundation

/// Reads the EXIF `Orientation` tag (TIFF tag 0x0112) from a JPEG file's header.
///
/// It walks the JPEG segments from SOI up to the first SOS, finds the APP1 segment that starts
/// with `Exif\0\0`, and reads IFD0 of the TIFF structure inside it, in either byte order.
/// Built for hostile bytes: every read is bounds-checked, the walk always moves forward, and only
/// IFD0 is read (no IFD links are followed), so it never crashes and never loops. A missing,
/// zero or invalid tag means ``ImageOrientation/up``.
enum EXIFOrientationReader {
    /// The orientation a JPEG file declares, ``ImageOrientation/up`` when it declares none.
    /// - Parameter jpeg: the file's bytes from its start; the segments before SOS are enough.
    static func orientation(inJPEG jpeg: UnsafeRawBufferPointer) -> ImageOrientation {
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return .up }
        var position = 2
        while position < jpeg.count {
            // Find the next marker: skip anything that is not 0xFF (libjpeg also tolerates
            // extraneous bytes), then fill bytes (0xFF runs).
            guard jpeg[position] == 0xFF else {
                position += 1
                continue
            }
            while position < jpeg.count && jpeg[position] == 0xFF { position += 1 }
            guard position < jpeg.count else { break }
            let marker = jpeg[position]
            position += 1
            switch marker {
            case 0x00, 0x01, 0xD0...0xD7:
                continue // stuffed byte, TEM and RSTn carry no length
            case 0xD9, 0xDA:
                return .up // EOI or SOS: the header is over
            default:
                break
            }
            guard position + 2 <= jpeg.count else { break }
            let length = Int(jpeg[position]) << 8 | Int(jpeg[position + 1])
            guard length >= 2 else { break }
            let payloadStart = position + 2
            let payloadEnd = position + length
            guard payloadEnd <= jpeg.count else { break }
            if marker == 0xE1 {
                let payload = UnsafeRawBufferPointer(rebasing: jpeg[payloadStart..<payloadEnd])
                if let value = orientationValue(inEXIFSegment: payload) {
                    return ImageOrientation(exifValue: value)
                }
            }
            position = payloadEnd
        }
        return .up
    }

    /// The orientation a JPEG file declares; see the `UnsafeRawBufferPointer` overload.
    static func orientation(inJPEG jpeg: [UInt8]) -> ImageOrientation {
        jpeg.withUnsafeBytes { orientation(inJPEG: $0) }
    }

    /// The raw Orientation value of an APP1 payload (`Exif\0\0` followed by a TIFF structure),
    /// or `nil` if the payload is not EXIF or has no readable Orientation tag.
    static func orientationValue(inEXIFSegment payload: UnsafeRawBufferPointer) -> Int? {
        let signature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00] // "Exif\0\0"
        guard payload.count >= signature.count, zip(payload, signature).allSatisfy({ $0 == $1 }) else { return nil }
        return orientationValue(inTIFF: UnsafeRawBufferPointer(rebasing: payload[signature.count...]))
    }

    /// The raw Orientation value in IFD0 of a TIFF structure, or `nil` if there is none.
    static func orientationValue(inTIFF tiff: UnsafeRawBufferPointer) -> Int? {
        let reader: TIFFReader
        switch (tiff.count >= 2 ? tiff[0] : 0, tiff.count >= 2 ? tiff[1] : 0) {
        case (0x49, 0x49): reader = TIFFReader(bytes: tiff, bigEndian: false) // "II"
        case (0x4D, 0x4D): reader = TIFFReader(bytes: tiff, bigEndian: true)  // "MM"
        default: return nil
        }
        guard reader.uint16(at: 2) == 42, let ifd = reader.uint32(at: 4).map(Int.init),
              let entryCount = reader.uint16(at: ifd).map(Int.init) else { return nil }
        for index in 0..<entryCount {
            let entry = ifd + 2 + index * 12
            guard let tag = reader.uint16(at: entry) else { return nil } // the IFD runs past the data
            guard tag == 0x0112 else { continue }
            return reader.firstInteger(ofEntryAt: entry)
        }
        return nil
    }

    /// Bounds-checked reads from a TIFF structure in one byte order.
    private struct TIFFReader {
        let bytes: UnsafeRawBufferPointer
        let bigEndian: Bool

        func uint16(at offset: Int) -> UInt16? {
            guard offset >= 0, offset <= bytes.count - 2 else { return nil }
            let (a, b) = (UInt16(bytes[offset]), UInt16(bytes[offset + 1]))
            return bigEndian ? a << 8 | b : b << 8 | a
        }

        func uint32(at offset: Int) -> UInt32? {
            guard offset >= 0, offset <= bytes.count - 4,
                  let high = uint16(at: bigEndian ? offset : offset + 2),
                  let low = uint16(at: bigEndian ? offset + 2 : offset) else { return nil }
            return UInt32(high) << 16 | UInt32(low)
        }

        /// The first value of a BYTE, SHORT or LONG entry (inline, or at its offset when it does not fit).
        func firstInteger(ofEntryAt entry: Int) -> Int? {
            guard let type = uint16(at: entry + 2), let count = uint32(at: entry + 4), count >= 1 else { return nil }
            let size: Int
            switch type {
            case 1: size = 1  // BYTE
            case 3: size = 2  // SHORT, the type the tag is defined with
            case 4: size = 4  // LONG
            default: return nil
            }
            var valueOffset = entry + 8
            if Int(count) * size > 4 {
                guard let offset = uint32(at: entry + 8) else { return nil }
                valueOffset = Int(offset)
            }
            switch size {
            case 1: return valueOffset >= 0 && valueOffset < bytes.count ? Int(bytes[valueOffset]) : nil
            case 2: return uint16(at: valueOffset).map(Int.init)
            default: return uint32(at: valueOffset).map(Int.init)
            }
        }
    }
}

extension ImageOrientation {
    /// Reads the Orientation tag of an EXIF block as containers store it (WebP's `EXIF` chunk, HEIF's
    /// Exif item, PNG's `eXIf`): a TIFF structure, with or without the `Exif\0\0` prefix JPEG's APP1
    /// segment has. A block without a readable Orientation (or with a value outside 1–8) means ``up``.
    /// - Parameter exif: the block's bytes.
    public init(exif: Data) {
        let value = exif.withUnsafeBytes { bytes in
            EXIFOrientationReader.orientationValue(inEXIFSegment: bytes) ?? EXIFOrientationReader.orientationValue(inTIFF: bytes)
        }
        self.init(exifValue: value ?? 1)
    }
}

