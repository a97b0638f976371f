import Foundation

/// Bounds-checked reads from a TIFF structure (an EXIF block) in one byte order: every read
/// returns `nil` outside the bytes, so hostile offsets cannot crash a reader.
struct TIFFReader {
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

extension TIFFReader {
    /// A reader for `tiff` in the byte order its header names (`II` or `MM`, then 42), or `nil`.
    init?(tiff: UnsafeRawBufferPointer) {
        switch (tiff.count >= 2 ? tiff[0] : 0, tiff.count >= 2 ? tiff[1] : 0) {
        case (0x49, 0x49): self.init(bytes: tiff, bigEndian: false)
        case (0x4D, 0x4D): self.init(bytes: tiff, bigEndian: true)
        default: return nil
        }
        guard uint16(at: 2) == 42 else { return nil }
    }

    /// The offset of IFD0's entry for `tag`, or `nil` (only IFD0 is read: no links are followed).
    func ifd0Entry(tag: UInt16) -> Int? {
        guard let ifd = uint32(at: 4).map(Int.init), let entryCount = uint16(at: ifd).map(Int.init) else { return nil }
        for index in 0..<entryCount {
            let entry = ifd + 2 + index * 12
            guard let found = uint16(at: entry) else { return nil }   // the IFD runs past the data
            if found == tag { return entry }
        }
        return nil
    }

    /// The text of an ASCII entry (type 2), without its terminating NUL; `nil` for another type or
    /// bytes outside the block.
    func ascii(ofEntryAt entry: Int) -> String? {
        guard uint16(at: entry + 2) == 2, let count = uint32(at: entry + 4).map(Int.init), count >= 1, count <= bytes.count else { return nil }
        var start = entry + 8
        if count > 4 {
            guard let offset = uint32(at: entry + 8).map(Int.init) else { return nil }
            start = offset
        }
        guard start >= 0, start + count <= bytes.count else { return nil }
        let text = bytes[start..<(start + count)].prefix { $0 != 0 }
        return String(decoding: text, as: UTF8.self)
    }
}
