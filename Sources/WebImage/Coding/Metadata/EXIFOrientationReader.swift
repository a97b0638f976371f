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
        guard let reader = TIFFReader(tiff: tiff), let entry = reader.ifd0Entry(tag: 0x0112) else { return nil }
        return reader.firstInteger(ofEntryAt: entry)
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

