import CPNG

/// The fast path of ``PNGCoder/decode(_:options:)`` for the PNGs servers see most (8-bit gray, gray +
/// alpha, RGB or RGBA, not interlaced, no palette or `tRNS`): libdeflate inflates the whole IDAT
/// stream at once and the rows are unfiltered in place (`png_fast.c`), about 1.7× faster than libpng
/// on a large photo. Its pixels are libpng's, byte for byte.
///
/// Every file it does not take, and every file whose structure libpng would report (a CRC error, a
/// misplaced or damaged zlib stream, a bad filter type, a size over the limit), is left to libpng:
/// the fast path returns `nil` and allocates nothing that outlives the call. The one difference:
/// libdeflate inflates a few invalid deflate encodings no encoder writes that zlib refuses (see
/// `png_fast.c`).
enum PNGFastDecoder {
    /// The image `bytes` (a whole PNG file) decodes to, or `nil` when libpng must decode it (also
    /// when the pixels cannot be allocated: libpng needs a little less).
    static func decode(_ bytes: UnsafeRawBufferPointer, pixelCountLimit: Int, scale: Double) -> Image? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        var layout = CPNGFastLayout()
        guard cpng_fast_layout(base, bytes.count, &layout) != 0 else { return nil }
        let (pixels, overflow) = Int(layout.width).multipliedReportingOverflow(by: Int(layout.height))
        guard !overflow, pixels <= pixelCountLimit else { return nil }   // libpng reports the size
        let pixelFormat: PixelFormat = switch layout.channels {
        case 1: .gray8
        case 2: .grayAlpha8
        case 3: .rgb8
        default: .rgba8
        }
        // Room for the inflated rows, each with its filter byte; the pixels are unfiltered in place.
        // Without it, libpng may still manage: it needs `height` bytes less.
        guard let storage = try? PixelStorage(byteCount: layout.filteredBytes) else { return nil }
        guard cpng_fast_decode(base, bytes.count, &layout, storage.bytes.assumingMemoryBound(to: UInt8.self), storage.capacity) != 0 else {
            return nil
        }
        return Image(storage: storage, width: Int(layout.width), height: Int(layout.height), pixelFormat: pixelFormat,
                     bytesPerRow: layout.rowBytes, format: .png, scale: scale)
    }
}
