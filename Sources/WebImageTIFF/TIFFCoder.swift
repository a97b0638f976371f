import CTIFF
import Foundation
import WebImage

/// Decodes and encodes TIFF through libtiff: register it once with `CoderRegistry.shared.add(TIFFCoder())`.
///
/// Decodes strips and tiles, contiguous and planar samples, 1–16-bit grey, palette, RGB, RGBA (associated
/// alpha un-premultiplied, unassociated kept), CMYK, uncompressed, LZW, Deflate, PackBits, JPEG, old-style
/// JPEG and CCITT data, predictors, both byte orders and BigTIFF. Samples are reduced to 8 bits (16-bit:
/// the high byte). One page is decoded: ``DecodeOptions/page`` (default the first). The Orientation tag is
/// the orientation step, as EXIF's is for JPEG: applied with ``DecodeOptions/applyOrientation`` (the
/// default), else reported in ``Image/orientation``. The ICC profile converts the pixels to sRGB with
/// ``DecodeOptions/convertsToSRGB``.
///
/// Encoding writes one page of 8-bit grey, grey+alpha, RGB or RGBA samples (alpha unassociated),
/// Deflate-compressed with the horizontal predictor, with the embedded ``EncodeOptions/colorProfile``.
///
/// The coder has no state: one value can be used from any number of threads at once. Every call runs on
/// the calling thread alone and blocks until done; libtiff prints nothing.
public struct TIFFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts with a TIFF or BigTIFF header, either byte order.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .tiff
    }

    /// Decodes one page of a complete TIFF file.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the page, the pixel-count limit (checked on the page's declared size before any pixel
    ///     memory is allocated; libtiff's own allocations are capped too), orientation, thumbnail size or
    ///     scale-down limit (applied after decoding), ``DecodeOptions/scale`` and ``DecodeOptions/convertsToSRGB``.
    /// - Returns: the page, with format ``ImageFormat/tiff``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `pageNotFound`; `imageTooLarge`;
    ///   `unsupportedFeature` for a valid page outside what is read (float or signed samples, 12-bit, CIELab);
    ///   `corruptData` for corrupt or truncated data, with libtiff's reason; `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .tiff || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try TIFFDecoding(bytes: bytes, options: options).decode()
        }
    }

    /// The number of pages (top-level directories) of a TIFF file.
    /// - Throws: ``ImageCodingError/corruptData(format:reason:)`` when libtiff refuses the header.
    public func pageCount(of data: Data) throws -> Int {
        try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try TIFFDecoding(bytes: bytes, options: DecodeOptions()).pageCount()
        }
    }

    /// Whether `format` is ``ImageFormat/tiff``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool { format == .tiff }

    /// Encodes `image` (its first frame) as a one-page, Deflate-compressed TIFF.
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat``; alpha is kept (unassociated).
    ///   - format: must be ``ImageFormat/tiff``.
    ///   - options: ``EncodeOptions/maxPixelSize`` and ``EncodeOptions/colorProfile``; TIFF is lossless here,
    ///     so qualities do not apply.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format;
    ///   ``ImageCodingError/encodingFailed(format:reason:)`` with libtiff's reason.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .tiff else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        var single = options
        single.firstFrameOnly = true
        let frame = try single.frames(of: image, keepingHighBitDepth: true)[0].image
        let icc = options.colorProfile.map { [UInt8]($0) } ?? []
        var message = [CChar](repeating: 0, count: 256)
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let status = frame.withUnsafePixels { pixels in
            ctiff_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(frame.width), Int32(frame.height), frame.bytesPerRow,
                         Int32(frame.pixelFormat.channelCount), Int32(frame.pixelFormat.bitsPerChannel), 1, 0, icc.isEmpty ? nil : icc, icc.count, &output, &count,
                         &message, message.count)
        }
        guard status == 0, let output else {
            throw ImageCodingError.encodingFailed(format: .tiff, reason: TIFFDecoding.text(message))
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in ctiff_free(pointer) })
    }
}
