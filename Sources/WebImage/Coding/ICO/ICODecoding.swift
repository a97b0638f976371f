/// ICO/CUR reading as the corpus reference (`tools/icoref.py`) defines it: a 6-byte header (reserved 0, type 1
/// icon or 2 cursor, entry count), 16-byte directory entries, each pointing at a PNG or at a DIB (see
/// `BMPDecoding.decodeIconDIB`). An entry whose byte range runs past the end of the file, or whose byte count
/// is under 8, is unusable and left out; a file with no usable entry is `.corrupt`.
enum ICODecoding {
    /// One usable directory entry.
    struct Entry: Sendable, Equatable {
        /// Its position in the file's directory (entries left out leave gaps).
        var index: Int
        /// As the directory says (a 0 byte means 256); the decoded image may differ.
        var width: Int
        var height: Int
        /// The depth of the data itself: the DIB header's bit count, or the PNG's bit depth × channels
        /// (bit depth for palette PNGs); 0 when unreadable. Not the directory's field.
        var bitCount: Int
        /// The data's byte offset in the file and its byte count (offset + size ≤ file size).
        var offset: Int
        var size: Int
        var isPNG: Bool
    }

    private static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Whether the bytes start like an ICO (type 1) or CUR (type 2) file.
    static func isICO(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 6 && bytes[0] == 0 && bytes[1] == 0 && (bytes[2] == 1 || bytes[2] == 2) && bytes[3] == 0
    }

    /// The usable entries, in directory order. Throws `.truncated` for a short header or directory,
    /// `.corrupt` for a bad header, an empty directory or a directory whose entries all point outside the file.
    static func entries(of bytes: UnsafeRawBufferPointer) throws(RasterDecodingError) -> [Entry] {
        let reader = RasterByteReader(bytes)
        guard reader.count >= 6 else { throw .truncated }
        let reserved = try reader.uint16(at: 0), type = try reader.uint16(at: 2)
        guard reserved == 0, type == 1 || type == 2 else {
            throw .corrupt("bad header reserved=\(reserved) type=\(type)")
        }
        let count = try reader.uint16(at: 4)
        guard count > 0 else { throw .corrupt("no images in the directory") }
        var entries: [Entry] = []
        for index in 0..<count {
            let base = 6 + 16 * index
            guard reader.contains(base, length: 16) else { throw .truncated }
            let width = try reader.uint8(at: base), height = try reader.uint8(at: base + 1)
            let size = Int(try reader.uint32(at: base + 8)), offset = Int(try reader.uint32(at: base + 12))
            guard size >= 8, reader.contains(offset, length: size) else { continue }
            let isPNG = (0..<8).allSatisfy { bytes[offset + $0] == pngSignature[$0] }
            entries.append(Entry(index: index, width: width == 0 ? 256 : width, height: height == 0 ? 256 : height,
                                 bitCount: depth(reader, offset: offset, isPNG: isPNG), offset: offset,
                                 size: size, isPNG: isPNG))
        }
        guard !entries.isEmpty else { throw .corrupt("every entry's data lies outside the file") }
        return entries
    }

    /// The reference choice: the largest width × height from the directory, ties → the deeper `bitCount`,
    /// then the first. 0 for an empty array (`entries(of:)` never returns one).
    static func largestEntryIndex(_ entries: [Entry]) -> Int {
        var best = 0
        for i in entries.indices.dropFirst() {
            let (candidate, chosen) = (entries[i], entries[best])
            let (area, bestArea) = (candidate.width * candidate.height, chosen.width * chosen.height)
            if area > bestArea || area == bestArea && candidate.bitCount > chosen.bitCount { best = i }
        }
        return best
    }

    /// The entry to show at `side` pixels: the smallest entry whose longer side is at least `side` (the shorter
    /// longer side, then the smaller area, then the deeper `bitCount`, then the first); when none is that
    /// large, the reference choice (`largestEntryIndex`). 0 for an empty array.
    static func entryIndex(nearest side: Int, in entries: [Entry]) -> Int {
        var best: Int?
        for i in entries.indices where max(entries[i].width, entries[i].height) >= side {
            guard let current = best else { best = i; continue }
            let (candidate, chosen) = (entries[i], entries[current])
            let key = (max(candidate.width, candidate.height), candidate.width * candidate.height)
            let bestKey = (max(chosen.width, chosen.height), chosen.width * chosen.height)
            if key < bestKey || key == bestKey && candidate.bitCount > chosen.bitCount { best = i }
        }
        return best ?? largestEntryIndex(entries)
    }

    /// Decodes a BMP entry (4 channels, see `BMPDecoding.decodeIconDIB`); nil for a PNG entry, which the
    /// caller decodes from `pngBytes(of:in:)`.
    static func decodeBMPEntry(_ entry: Entry, in bytes: UnsafeRawBufferPointer, maxPixelCount: Int)
        throws(RasterDecodingError) -> DecodedRaster? {
        if entry.isPNG { return nil }
        guard entry.offset >= 0, entry.offset < bytes.count else { throw .corrupt("entry data outside the file") }
        // The DIB may run past the directory's byte count (it is not trusted): hand it the rest of the file.
        return try BMPDecoding.decodeIconDIB(UnsafeRawBufferPointer(rebasing: bytes[entry.offset...]),
                                             maxPixelCount: maxPixelCount)
    }

    /// The byte range to give a PNG decoder for an entry: from its offset to the end of the file, as the
    /// reference reads it (a directory's byte count may be short).
    static func pngByteRange(of entry: Entry, in bytes: UnsafeRawBufferPointer) -> Range<Int> {
        let start = min(max(entry.offset, 0), bytes.count)
        return start..<bytes.count
    }

    /// The depth used to break ties between equally large entries.
    private static func depth(_ reader: RasterByteReader, offset: Int, isPNG: Bool) -> Int {
        if isPNG {
            // IHDR follows the 8-byte signature and an 8-byte chunk header: bit depth at +24, colour type at +25.
            guard let bitDepth = try? reader.uint8(at: offset + 24),
                  let colorType = try? reader.uint8(at: offset + 25) else { return 0 }
            let channels = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][colorType] ?? 0
            return bitDepth * channels
        }
        return (try? reader.uint16(at: offset + 14)) ?? 0
    }
}
