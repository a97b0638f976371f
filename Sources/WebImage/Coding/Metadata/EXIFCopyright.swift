import Foundation

/// The one EXIF field WebImage writes to outputs, on request: `Copyright` (tag 0x8298), and finding
/// it in a source. Everything else in a source's EXIF (GPS position, camera serial, thumbnails) is
/// never copied: outputs are re-encoded pixels with no metadata but what these write.
enum EXIFCopyright {
    /// A TIFF structure (little-endian) whose IFD0 holds only `Copyright`: what PNG's `eXIf`, WebP's
    /// `EXIF` and AVIF's `Exif` hold, and JPEG's `APP1` after `Exif\0\0`. Text past 64 KB is cut.
    static func tiff(copyright: String) -> [UInt8] {
        let text = Array(copyright.utf8.prefix(65_000).prefix { $0 != 0 }) + [0]
        var tiff: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]   // "II", 42, IFD0 at 8
        func append16(_ value: Int) { tiff += [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF)] }
        func append32(_ value: Int) { append16(value & 0xFFFF); append16(value >> 16 & 0xFFFF) }
        append16(1)                       // one entry
        append16(0x8298)                  // Copyright
        append16(2)                       // ASCII
        append32(text.count)
        if text.count <= 4 {
            tiff += text + [UInt8](repeating: 0, count: 4 - text.count)
            append32(0)                   // no next IFD
        } else {
            append32(8 + 2 + 12 + 4)      // the text follows the IFD
            append32(0)
            tiff += text
        }
        return tiff
    }

    /// The `Copyright` text of a source's EXIF (JPEG `APP1`, PNG `eXIf`, WebP `EXIF`), or `nil`
    /// when there is none or it is empty.
    static func copyright(in data: Data) -> String? {
        data.withUnsafeBytes { bytes in
            guard let tiff = EXIFBlock.tiff(in: bytes), let reader = TIFFReader(tiff: tiff),
                  let entry = reader.ifd0Entry(tag: 0x8298), let text = reader.ascii(ofEntryAt: entry),
                  !text.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
            return text
        }
    }
}
