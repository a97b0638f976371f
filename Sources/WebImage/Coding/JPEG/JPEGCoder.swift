import Foundation

/// Decodes and encodes JPEG through libjpeg-turbo, incrementally too.
///
/// Decoding handles baseline, progressive and other multi-scan files, arithmetic coding, restart
/// markers and every chroma subsampling, with libjpeg's accurate integer DCT and fancy upsampling
/// (the same pixels as `djpeg`). Grayscale decodes to ``PixelFormat/gray8``; YCbCr, RGB, CMYK and
/// YCCK to ``PixelFormat/rgb8`` (CMYK as Adobe stores it, inverted). The EXIF orientation is read
/// and, by default, applied. Thumbnails and ``DecodeOptions/maxPixelCount`` use libjpeg's DCT
/// scaling (1/2, 1/4, 1/8) and then an area-averaging resample to the exact size.
///
/// Data libjpeg can recover from (extraneous bytes before a marker) decodes the way browsers show
/// it; a file that ends early, or whose image data stops short before an end marker (libjpeg's
/// "premature end of data segment"), throws ``ImageCodingError/truncatedData(format:)``: a full
/// decode never returns a partial image. 12-bit JPEG is not supported by the libjpeg-turbo 2.1 this
/// links and throws ``ImageCodingError/unsupportedFeature(format:reason:)``.
///
/// A value type without state: share it freely across threads; each call decodes independently.
public struct JPEGCoder: ProgressiveImageCoder {
    /// Creates the coder. It has no settings: each decode and encode takes its options.
    public init() {}

    /// Whether `data` starts with a JPEG signature (`FF D8 FF`). Looks at the first bytes only.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data.prefix(32)) == .jpeg
    }

    /// Decodes a complete JPEG file.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the output size (``DecodeOptions/outputSize(forSource:)``, computed on the
    ///     displayed size when orientation is applied and swaps the sides), the pixel-count limit,
    ///     whether to apply the EXIF orientation (default yes) and the scale to record.
    /// - Returns: a ``PixelFormat/gray8`` or ``PixelFormat/rgb8`` image with format ``ImageFormat/jpeg``.
    /// - Throws: ``ImageCodingError``: `truncatedData` if the file ends before the image does,
    ///   `corruptData` with libjpeg's message, `imageTooLarge` when the header declares more than
    ///   ``DecodeOptions/pixelCountLimit`` pixels (checked before any pixel memory is allocated),
    ///   `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let decompressor = try JPEGDecompressor(options: options)
        return try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Image in
            // The same state machine an incremental decode runs, given every byte at once.
            decompressor.useCompleteInput(bytes)
            try decompressor.advance()
            return try decompressor.makeImage()
        }
    }

    /// Whether this coder writes `format`: true for ``ImageFormat/jpeg`` only.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .jpeg
    }

    /// Encodes `image` as a baseline JPEG file.
    ///
    /// Quality is ``EncodeOptions/compressionQuality`` (0...1, default 0.9) mapped to libjpeg's
    /// 1...100; from 0.9 up, chroma keeps full resolution (4:4:4), below it is 4:2:0. Gray images
    /// stay gray. Alpha (``PixelFormat/rgba8``, ``PixelFormat/grayAlpha8``) is composed over
    /// ``EncodeOptions/backgroundColor`` (default white). ``EncodeOptions/maxPixelSize`` scales
    /// the image down first, keeping its aspect ratio. The image's orientation is not written:
    /// encode an upright image (``Image/oriented()``).
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for any format but
    ///   JPEG, ``ImageCodingError/encodingFailed(format:reason:)`` with libjpeg's message,
    ///   ``ImageCodingError/insufficientMemory(byteCount:)``.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .jpeg else {
            throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
        }
        return try JPEGEncoder.encode(image, options: options)
    }

    /// Creates a decoder to feed one JPEG file's bytes as they arrive.
    ///
    /// Baseline files yield the rows decoded so far (the rest zero); progressive files yield the
    /// latest complete scan at full output size. The final image equals ``decode(_:options:)`` of
    /// the same bytes, byte for byte.
    /// - Parameter options: as for ``decode(_:options:)``; partial images honour them too.
    public func makeIncrementalDecoder(options: DecodeOptions = DecodeOptions()) -> any IncrementalDecoder {
        JPEGIncrementalDecoder(options: options)
    }
}
