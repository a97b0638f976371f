import CPNG

/// The fast path of ``PNGCoder/decode(_:options:)`` for the PNGs servers see most (8-bit gray, gray +
/// alpha, RGB or RGBA, not interlaced, no palette or `tRNS`): libdeflate inflates the whole IDAT
/// stream at once and the rows are unfiltered in place (`png_fast.c`), about 1.7× faster than libpng
/// on a large photo. Its pixels are libpng's, byte for byte.
///
/// Every file it does not take, and every file libpng would report anything about (a CRC error, a
/// damaged zlib stream, a bad filter type, a size over the limit), is left to libpng, whose verdict
/// stays the reference: the fast path returns `nil` and allocates nothing that outlives the call.
enum PNGFastDecoder {
    /// The image `bytes` (a whole PNG file) decodes to, or `nil` when libpng must decode it.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` when the pixels cannot be allocated.
    static func decode(_ bytes: UnsafeRawBufferPointer, pixelCountLimit: Int, scale: Double) throws(ImageCodingError) -> Image? {
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
        let storage = try PixelStorage(byteCount: layout.filteredBytes)
        guard cpng_fast_decode(base, bytes.count, &layout, storage.bytes.assumingMemoryBound(to: UInt8.self), storage.capacity) != 0 else {
            return nil
        }
        return Image(storage: storage, width: Int(layout.width), height: Int(layout.height), pixelFormat: pixelFormat,
                     bytesPerRow: layout.rowBytes, format: .png, scale: scale)
    }
}
