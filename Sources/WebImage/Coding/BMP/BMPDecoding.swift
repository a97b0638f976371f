/// A BMP (and icon DIB) decoder in plain Swift, reproducing the corpus reference `tools/bmpref.py`:
/// - 1/2/4/8-bit palettes (`biClrUsed`, 0 → 2^bpp, at most 256 used; an index past the palette is an error),
///   OS/2 1.x 3-byte entries; 24-bit BGR; 16/32-bit bitfields scaled round(v·255/(2^n−1));
/// - alpha only from an alpha mask with BI_BITFIELDS/BI_ALPHABITFIELDS (32-bit BI_RGB is opaque);
/// - RLE4/RLE8 pixels never written are transparent (0,0,0,0); a run or delta past the row/image is an error;
/// - BI_JPEG/BI_PNG, OS/2 Huffman/RLE24 and 64-bit are refused (`.unsupported`);
/// - pixel data cut short is `.truncated`; header fields the reference only warns about (bfSize, biSizeImage,
///   odd densities) are ignored.
/// Every offset comes from the file and is range-checked before use; nothing is allocated before the
/// declared size passes the pixel budget.
enum BMPDecoding {
    /// Reads only the headers (file header, DIB header, bitfield masks, palette bounds).
    static func header(of bytes: UnsafeRawBufferPointer) throws(RasterDecodingError)
        -> (width: Int, height: Int, hasAlpha: Bool) {
        let layout = try fileLayout(RasterByteReader(bytes))
        return (layout.width, layout.height, layout.hasAlpha)
    }

    /// Decodes a BMP file: 3 channels (RGB) when opaque, 4 (RGBA) for RLE and alpha-mask images.
    static func decode(_ bytes: UnsafeRawBufferPointer, maxPixelCount: Int) throws(RasterDecodingError)
        -> DecodedRaster {
        let reader = RasterByteReader(bytes)
        let layout = try fileLayout(reader)
        guard layout.pixelOffset < reader.count else { throw .truncated }  // bfOffBits past the end
        try layout.checkPixelBudget(maxPixelCount)
        if layout.isRunLength {
            let pixels = try BMPRunLength.decode(reader, layout: layout)
            return DecodedRaster(width: layout.width, height: layout.height, channels: 4, pixels: pixels)
        }
        let channels = layout.masks.alpha != 0 ? 4 : 3
        let pixels = try decodeUncompressed(reader, layout: layout, channels: channels)
        return DecodedRaster(width: layout.width, height: layout.height, channels: channels, pixels: pixels)
    }

    /// Decodes an ICO/CUR entry's DIB: no file header, the height counts the XOR bitmap and the AND mask, the
    /// pixel data follows the palette. `bytes` runs from the DIB header to the end of the file (an entry's byte
    /// count is not trusted). Always 4 channels: 32-bit BI_RGB entries take alpha from their 4th byte and
    /// ignore the AND mask (which may be missing); 32-bit bitfield entries take alpha from their alpha mask
    /// only; every other depth takes its colours from the XOR bitmap and alpha 0 where the AND mask bit is 1.
    /// RLE-compressed icon bitmaps are refused, as the reference does.
    static func decodeIconDIB(_ bytes: UnsafeRawBufferPointer, maxPixelCount: Int) throws(RasterDecodingError)
        -> DecodedRaster {
        let reader = RasterByteReader(bytes)
        var layout = try BMPLayout.parse(reader, at: 0, pixelOffset: nil, isIcon: true)
        if layout.isRunLength { throw .unsupported("RLE-compressed icon bitmap") }
        try layout.checkPixelBudget(maxPixelCount)
        let alphaFromPixels = layout.bitCount == 32
        if layout.bitCount == 32 && layout.compression == .rgb { layout.masks.alpha = 0xFF00_0000 }
        var pixels = try decodeUncompressed(reader, layout: layout, channels: 4)
        if !alphaFromPixels { try applyANDMask(reader, layout: layout, to: &pixels) }
        return DecodedRaster(width: layout.width, height: layout.height, channels: 4, pixels: pixels)
    }

    // MARK: - Layout

    private static func fileLayout(_ reader: RasterByteReader) throws(RasterDecodingError) -> BMPLayout {
        guard reader.count >= 2, reader.bytes[0] == 0x42, reader.bytes[1] == 0x4D else {
            throw .corrupt("not a BMP file")
        }
        guard reader.count >= 26 else { throw .truncated }
        let pixelOffset = Int(try reader.uint32(at: 10))
        return try BMPLayout.parse(reader, at: 14, pixelOffset: pixelOffset, isIcon: false)
    }

    // MARK: - Uncompressed pixels

    /// Decodes BI_RGB / BI_BITFIELDS / BI_ALPHABITFIELDS rows into `channels` (3 or 4) interleaved samples,
    /// rows top to bottom. With 3 channels the alpha mask is ignored.
    private static func decodeUncompressed(_ reader: RasterByteReader, layout: BMPLayout, channels: Int)
        throws(RasterDecodingError) -> [UInt8] {
        let width = layout.width, height = layout.height, stride = layout.rowStride
        guard reader.contains(layout.pixelOffset, length: layout.pixelDataSize) else { throw .truncated }
        var out = [UInt8](repeating: 255, count: width * height * channels)
        let source = reader.bytes
        let failure: RasterDecodingError? = out.withUnsafeMutableBufferPointer { out in
            switch layout.bitCount {
            case 1, 2, 4, 8:
                let palette = layout.paletteRGB(reader)
                let bits = layout.bitCount, valueMask = (1 << bits) - 1
                for row in 0..<height {
                    let start = layout.pixelOffset + row * stride
                    var target = destinationRow(row, layout) * width * channels
                    for x in 0..<width {
                        let bit = x * bits
                        let byte = Int(source[start + (bit >> 3)])
                        let index = (byte >> (8 - bits - (bit & 7))) & valueMask
                        guard index < layout.paletteCount else { return .corrupt("palette index out of range") }
                        out[target] = palette[index * 3]
                        out[target + 1] = palette[index * 3 + 1]
                        out[target + 2] = palette[index * 3 + 2]
                        target += channels
                    }
                }
            case 24:
                copyBGR(source, layout: layout, channels: channels, pixelBytes: 3, writesAlpha: false, into: out)
            default:
                decodeBitfields(source, layout: layout, channels: channels, into: out)
            }
            return nil
        }
        if let failure { throw failure }
        return out
    }

    /// Byte-aligned BGR(A) pixels (24-bit, and 32-bit with the common 8-8-8(-8) masks) copied to RGB(A).
    private static func copyBGR(_ source: UnsafeRawBufferPointer, layout: BMPLayout, channels: Int, pixelBytes: Int,
                                writesAlpha: Bool, into out: UnsafeMutableBufferPointer<UInt8>) {
        let width = layout.width, stride = layout.rowStride
        for row in 0..<layout.height {
            var from = layout.pixelOffset + row * stride
            var target = destinationRow(row, layout) * width * channels
            for _ in 0..<width {
                out[target] = source[from + 2]
                out[target + 1] = source[from + 1]
                out[target + 2] = source[from]
                if writesAlpha { out[target + 3] = source[from + 3] }
                from += pixelBytes
                target += channels
            }
        }
    }

    /// 16- and 32-bit pixels through their channel masks (the caller has checked the data's range).
    private static func decodeBitfields(_ source: UnsafeRawBufferPointer, layout: BMPLayout, channels: Int,
                                        into out: UnsafeMutableBufferPointer<UInt8>) {
        let width = layout.width, stride = layout.rowStride, masks = layout.masks
        let pixelBytes = layout.bitCount / 8
        let writesAlpha = channels == 4 && masks.alpha != 0
        // The common 8-8-8(-8) layout: plain byte copies.
        if pixelBytes == 4, masks.red == 0xFF_0000, masks.green == 0xFF00, masks.blue == 0xFF,
           masks.alpha == 0 || masks.alpha == 0xFF00_0000 {
            copyBGR(source, layout: layout, channels: channels, pixelBytes: 4, writesAlpha: writesAlpha, into: out)
            return
        }
        let red = BMPChannelScaler(mask: masks.red), green = BMPChannelScaler(mask: masks.green)
        let blue = BMPChannelScaler(mask: masks.blue), alpha = BMPChannelScaler(mask: masks.alpha)
        for row in 0..<layout.height {
            var from = layout.pixelOffset + row * stride
            var target = destinationRow(row, layout) * width * channels
            for _ in 0..<width {
                var pixel = UInt32(source[from]) | UInt32(source[from + 1]) << 8
                if pixelBytes == 4 { pixel |= UInt32(source[from + 2]) << 16 | UInt32(source[from + 3]) << 24 }
                out[target] = red.value(of: pixel)
                out[target + 1] = green.value(of: pixel)
                out[target + 2] = blue.value(of: pixel)
                if writesAlpha { out[target + 3] = alpha.value(of: pixel) }
                from += pixelBytes
                target += channels
            }
        }
    }

    /// The output row of stored row `row` (stored rows run bottom-up unless the height was negative).
    @inline(__always)
    private static func destinationRow(_ row: Int, _ layout: BMPLayout) -> Int {
        layout.isTopDown ? row : layout.height - 1 - row
    }

    // MARK: - Icon mask

    /// Sets alpha 0 where the 1-bit AND mask after the XOR bitmap has a 1 (the colour stays the XOR one).
    /// The mask's rows follow the XOR bitmap's orientation.
    private static func applyANDMask(_ reader: RasterByteReader, layout: BMPLayout, to pixels: inout [UInt8])
        throws(RasterDecodingError) {
        let width = layout.width, height = layout.height
        let maskStride = (width + 31) / 32 * 4
        let maskOffset = layout.pixelOffset + layout.pixelDataSize
        guard reader.contains(maskOffset, length: maskStride * height) else { throw .truncated }
        let source = reader.bytes
        pixels.withUnsafeMutableBufferPointer { out in
            for row in 0..<height {
                let start = maskOffset + row * maskStride
                let target = destinationRow(row, layout) * width * 4
                for x in 0..<width where source[start + (x >> 3)] & (0x80 >> UInt8(x & 7)) != 0 {
                    out[target + x * 4 + 3] = 0
                }
            }
        }
    }
}
