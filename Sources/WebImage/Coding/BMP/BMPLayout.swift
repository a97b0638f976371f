/// What a DIB's headers say, once validated: size, orientation, pixel format, where the palette and the
/// pixel data are. Parsing follows the corpus reference (`tools/bmpref.py`): OS/2 1.x (12-byte) headers with
/// 3-byte palette entries, OS/2 2.x (16/64-byte) and Windows v3/v4/v5 (40/52/56/108/124-byte) headers;
/// 1/2/4/8/16/24/32-bit, RLE4/RLE8, BI_BITFIELDS and BI_ALPHABITFIELDS.
struct BMPLayout: Sendable, Equatable {
    enum Compression: Int, Sendable {
        case rgb = 0, runLength8 = 1, runLength4 = 2, bitfields = 3, alphaBitfields = 6
    }

    /// The bit positions of each channel in a 16- or 32-bit pixel (0 = the channel is absent).
    struct ChannelMasks: Sendable, Equatable {
        var red: UInt32, green: UInt32, blue: UInt32, alpha: UInt32
    }

    /// Sides are at most 65535 (the reference's limit), so every product below fits an `Int`.
    static let maximumSide = 65535

    var width: Int
    var height: Int
    var isTopDown: Bool
    var bitCount: Int
    var compression: Compression
    var masks: ChannelMasks
    /// Where the palette starts (absolute), its entry size (3 or 4 bytes, BGR first) and the entries used (≤ 256).
    var paletteOffset: Int
    var paletteEntrySize: Int
    var paletteCount: Int
    /// Where the pixel data starts (absolute; bfOffBits for a file, after the palette for an icon DIB).
    var pixelOffset: Int

    var isRunLength: Bool { compression == .runLength8 || compression == .runLength4 }
    /// RLE may leave pixels unwritten (transparent); bitfields may carry an alpha mask.
    var hasAlpha: Bool { isRunLength || masks.alpha != 0 }
    /// Bytes a stored row takes for the uncompressed layouts (rows are padded to 4 bytes).
    var rowStride: Int { (width * bitCount + 31) / 32 * 4 }
    var pixelDataSize: Int { rowStride * height }

    /// Parses the DIB header at `position`. `pixelOffset` is the file header's bfOffBits (absolute), or nil
    /// for an icon DIB, whose data follows the palette and whose height counts the XOR bitmap and the AND mask.
    static func parse(_ reader: RasterByteReader, at position: Int, pixelOffset fileOffset: Int?,
                      isIcon: Bool) throws(RasterDecodingError) -> BMPLayout {
        let headerSize = Int(try reader.uint32(at: position))
        let width: Int, signedHeight: Int, planes: Int, bitCount: Int
        var compressionValue = 0, colorsUsed = 0, paletteEntrySize = 4
        switch headerSize {
        case 12:
            width = try reader.int16(at: position + 4)
            signedHeight = try reader.int16(at: position + 6)
            planes = try reader.uint16(at: position + 8)
            bitCount = try reader.uint16(at: position + 10)
            paletteEntrySize = 3
        case 16, 40, 52, 56, 64, 108, 124:
            width = try reader.int32(at: position + 4)
            signedHeight = try reader.int32(at: position + 8)
            planes = try reader.uint16(at: position + 12)
            bitCount = try reader.uint16(at: position + 14)
            if headerSize != 16 {
                compressionValue = Int(try reader.uint32(at: position + 16))
                colorsUsed = Int(try reader.uint32(at: position + 32))
            }
        default:
            throw .corrupt("unsupported header size \(headerSize)")
        }
        if headerSize == 16 || headerSize == 64, compressionValue == 3 || compressionValue == 4 {
            throw .unsupported("OS/2 compression \(compressionValue) (Huffman 1D / RLE24)")
        }
        guard planes == 1 else { throw .corrupt("planes=\(planes)") }
        let isTopDown = signedHeight < 0
        var height = abs(signedHeight)  // an Int from an Int32: Int32.min does not trap
        if isIcon { height /= 2 }
        guard width > 0, height > 0 else { throw .corrupt("bad size \(width)x\(height)") }
        guard width <= maximumSide, height <= maximumSide else { throw .tooLarge(width: width, height: height) }
        if compressionValue == 4 || compressionValue == 5 {
            throw .unsupported("BI_JPEG/BI_PNG compression \(compressionValue)")
        }
        guard [1, 2, 4, 8, 16, 24, 32].contains(bitCount) else {
            if bitCount == 64 { throw .unsupported("64-bit pixels") }
            throw .corrupt("bpp=\(bitCount)")
        }
        guard let compression = Compression(rawValue: compressionValue) else {
            throw .corrupt("compression \(compressionValue)")
        }
        if compression == .runLength8 && bitCount != 8 || compression == .runLength4 && bitCount != 4 {
            throw .corrupt("RLE with wrong bpp")
        }
        let isBitfields = compression == .bitfields || compression == .alphaBitfields
        if isBitfields && bitCount != 16 && bitCount != 32 { throw .corrupt("bitfields with wrong bpp") }
        if isTopDown && (compression == .runLength8 || compression == .runLength4) { throw .corrupt("top-down RLE") }

        var cursor = position + headerSize
        var masks = ChannelMasks(red: 0, green: 0, blue: 0, alpha: 0)
        if isBitfields {
            if headerSize >= 52 {
                masks.red = try reader.uint32(at: position + 40)
                masks.green = try reader.uint32(at: position + 44)
                masks.blue = try reader.uint32(at: position + 48)
                if headerSize >= 56 { masks.alpha = try reader.uint32(at: position + 52) }
            } else {
                masks.red = try reader.uint32(at: cursor)
                masks.green = try reader.uint32(at: cursor + 4)
                masks.blue = try reader.uint32(at: cursor + 8)
                if compression == .alphaBitfields { masks.alpha = try reader.uint32(at: cursor + 12) }
                cursor += compression == .alphaBitfields ? 16 : 12
            }
        } else if bitCount == 16 {
            masks = ChannelMasks(red: 0x7C00, green: 0x03E0, blue: 0x001F, alpha: 0)
        } else if bitCount == 32 {
            masks = ChannelMasks(red: 0xFF_0000, green: 0xFF00, blue: 0xFF, alpha: 0)
        }

        let paletteOffset = cursor
        var paletteCount = 0
        if bitCount <= 8 {
            let maximum = 1 << bitCount
            let declared = colorsUsed != 0 ? colorsUsed : maximum
            // colorsUsed < 2^32 and an entry is at most 4 bytes: no overflow on 64-bit Int.
            let paletteBytes = declared * paletteEntrySize
            if colorsUsed > maximum && colorsUsed > 256
                && (fileOffset == nil || !reader.contains(cursor, length: colorsUsed * paletteEntrySize)) {
                throw .corrupt("palette size \(colorsUsed)")
            }
            guard reader.contains(cursor, length: paletteBytes) else { throw .truncated }
            paletteCount = min(declared, 256)
            cursor += paletteBytes
        } else if colorsUsed != 0 && headerSize != 12 && fileOffset == nil {
            cursor += colorsUsed * 4  // an optional palette before 16/24/32-bit icon data
        }
        return BMPLayout(width: width, height: height, isTopDown: isTopDown, bitCount: bitCount,
                         compression: compression, masks: masks, paletteOffset: paletteOffset,
                         paletteEntrySize: paletteEntrySize, paletteCount: paletteCount,
                         pixelOffset: fileOffset ?? cursor)
    }

    /// The palette as 256 RGB triplets (entries past `paletteCount` are black and never used).
    func paletteRGB(_ reader: RasterByteReader) -> [UInt8] {
        var table = [UInt8](repeating: 0, count: 256 * 3)
        for index in 0..<paletteCount {
            let entry = paletteOffset + index * paletteEntrySize
            guard reader.contains(entry, length: 3) else { break }  // checked by parse; never trap anyway
            table[index * 3] = reader.bytes[entry + 2]
            table[index * 3 + 1] = reader.bytes[entry + 1]
            table[index * 3 + 2] = reader.bytes[entry]
        }
        return table
    }

    /// Throws `.tooLarge` when the declared size is over the caller's budget: call before allocating.
    func checkPixelBudget(_ maxPixelCount: Int) throws(RasterDecodingError) {
        if width * height > maxPixelCount { throw .tooLarge(width: width, height: height) }
    }
}
