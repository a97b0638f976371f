/// A simple BMP writer. Input: 8-bit samples, `channels` interleaved (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA
/// straight alpha), rows top to bottom, `bytesPerRow` apart. Grey is expanded to RGB.
/// - opaque input (1 or 3 channels): 24-bit BI_RGB, BITMAPINFOHEADER;
/// - input with alpha (2 or 4 channels): 32-bit BI_BITFIELDS with an alpha mask, BITMAPV4HEADER (sRGB).
/// Rows are stored bottom-up (positive height), the most widely read layout.
/// Returns an empty array when the arguments are impossible (a size ≤ 0, channels outside 1...4, rows shorter
/// than `width * channels`, a buffer shorter than the rows, or a file over 4 GiB).
enum BMPEncoding {
    static func encode(width: Int, height: Int, channels: Int, pixels: UnsafeRawBufferPointer,
                       bytesPerRow: Int) -> [UInt8] {
        guard let rowBytes = rowSize(width: width, bitsPerPixel: channels % 2 == 0 ? 32 : 24),
              checkInput(width: width, height: height, channels: channels, count: pixels.count,
                         bytesPerRow: bytesPerRow) else { return [] }
        let hasAlpha = channels % 2 == 0
        let infoSize = hasAlpha ? 108 : 40
        let dataOffset = 14 + infoSize
        let (imageSize, overflow) = rowBytes.multipliedReportingOverflow(by: height)
        guard !overflow, imageSize <= Int(UInt32.max) - dataOffset else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(dataOffset + imageSize)
        out += [0x42, 0x4D]
        out.appendLittleEndian(bytes: 4, dataOffset + imageSize)
        out.appendLittleEndian(bytes: 4, 0)  // reserved
        out.appendLittleEndian(bytes: 4, dataOffset)
        appendInfoHeader(&out, size: infoSize, width: width, height: height, bitCount: hasAlpha ? 32 : 24,
                         compression: hasAlpha ? 3 : 0, imageSize: imageSize)
        if hasAlpha {
            for mask in [0x00FF_0000, 0x0000_FF00, 0x0000_00FF, 0xFF00_0000] { out.appendLittleEndian(bytes: 4, mask) }
            out.appendLittleEndian(bytes: 4, 0x7352_4742)  // LCS_sRGB ("sRGB")
            out += [UInt8](repeating: 0, count: 36 + 12)  // endpoints, gammas (unused with LCS_sRGB)
        }
        appendRows(&out, width: width, height: height, channels: channels, pixels: pixels,
                   bytesPerRow: bytesPerRow, bitsPerPixel: hasAlpha ? 32 : 24, rowBytes: rowBytes)
        return out
    }

    /// An ICO/CUR entry's DIB: BITMAPINFOHEADER with the height doubled, 32-bit BGRA rows bottom-up (alpha
    /// 255 for opaque input), then an all-zero 1-bit AND mask. Empty for impossible arguments (see `encode`).
    static func iconDIB(width: Int, height: Int, channels: Int, pixels: UnsafeRawBufferPointer,
                        bytesPerRow: Int) -> [UInt8] {
        guard checkInput(width: width, height: height, channels: channels, count: pixels.count,
                         bytesPerRow: bytesPerRow),
              width <= BMPLayout.maximumSide, height <= BMPLayout.maximumSide else { return [] }
        let rowBytes = width * 4, maskRowBytes = (width + 31) / 32 * 4
        let imageSize = (rowBytes + maskRowBytes) * height
        guard imageSize <= Int(UInt32.max) - 40 else { return [] }
        var out: [UInt8] = []
        out.reserveCapacity(40 + imageSize)
        appendInfoHeader(&out, size: 40, width: width, height: height * 2, bitCount: 32, compression: 0,
                         imageSize: imageSize)
        appendRows(&out, width: width, height: height, channels: channels, pixels: pixels,
                   bytesPerRow: bytesPerRow, bitsPerPixel: 32, rowBytes: rowBytes)
        out += [UInt8](repeating: 0, count: maskRowBytes * height)
        return out
    }

    // MARK: - Pieces

    private static func checkInput(width: Int, height: Int, channels: Int, count: Int, bytesPerRow: Int) -> Bool {
        guard width > 0, height > 0, width <= Int(Int32.max), height <= Int(Int32.max),
              (1...4).contains(channels) else { return false }
        let (rowUsed, o1) = width.multipliedReportingOverflow(by: channels)
        guard !o1, bytesPerRow >= rowUsed else { return false }
        let (before, o2) = bytesPerRow.multipliedReportingOverflow(by: height - 1)
        guard !o2 else { return false }
        let (needed, o3) = before.addingReportingOverflow(rowUsed)
        return !o3 && needed <= count
    }

    /// Bytes a stored row takes, padded to 4; nil on overflow.
    private static func rowSize(width: Int, bitsPerPixel: Int) -> Int? {
        let (bits, overflow) = width.multipliedReportingOverflow(by: bitsPerPixel)
        guard !overflow, width > 0, bits <= Int.max - 31 else { return nil }
        return (bits + 31) / 32 * 4
    }

    private static func appendInfoHeader(_ out: inout [UInt8], size: Int, width: Int, height: Int,
                                         bitCount: Int, compression: Int, imageSize: Int) {
        out.appendLittleEndian(bytes: 4, size)
        out.appendLittleEndian(bytes: 4, width)
        out.appendLittleEndian(bytes: 4, height)
        out.appendLittleEndian(bytes: 2, 1)  // planes
        out.appendLittleEndian(bytes: 2, bitCount)
        out.appendLittleEndian(bytes: 4, compression)
        out.appendLittleEndian(bytes: 4, imageSize)
        out.appendLittleEndian(bytes: 4, 2835)  // 72 dpi
        out.appendLittleEndian(bytes: 4, 2835)
        out.appendLittleEndian(bytes: 4, 0)  // colours used
        out.appendLittleEndian(bytes: 4, 0)  // colours important
    }

    /// BGR(A) rows, bottom row first, each padded to `rowBytes`.
    private static func appendRows(_ out: inout [UInt8], width: Int, height: Int, channels: Int,
                                   pixels: UnsafeRawBufferPointer, bytesPerRow: Int, bitsPerPixel: Int,
                                   rowBytes: Int) {
        let pixelBytes = bitsPerPixel / 8
        var row = [UInt8](repeating: 0, count: rowBytes)
        for y in stride(from: height - 1, through: 0, by: -1) {
            let start = y * bytesPerRow
            row.withUnsafeMutableBufferPointer { row in
                for x in 0..<width {
                    let s = start + x * channels, d = x * pixelBytes
                    let (r, g, b, a): (UInt8, UInt8, UInt8, UInt8)
                    switch channels {
                    case 1: (r, g, b, a) = (pixels[s], pixels[s], pixels[s], 255)
                    case 2: (r, g, b, a) = (pixels[s], pixels[s], pixels[s], pixels[s + 1])
                    case 3: (r, g, b, a) = (pixels[s], pixels[s + 1], pixels[s + 2], 255)
                    default: (r, g, b, a) = (pixels[s], pixels[s + 1], pixels[s + 2], pixels[s + 3])
                    }
                    row[d] = b
                    row[d + 1] = g
                    row[d + 2] = r
                    if pixelBytes == 4 { row[d + 3] = a }
                }
            }
            out += row  // its padding bytes stay 0
        }
    }
}
