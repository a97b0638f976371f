import CPNG
import Foundation

/// Decodes and encodes PNG through libpng.
///
/// Decoding handles every colour type and bit depth (1, 2, 4, 8, 16), palettes, `tRNS` transparency
/// and Adam7 interlacing. The result uses the smallest ``PixelFormat`` that holds the file without loss:
/// ``PixelFormat/gray8`` for gray, ``PixelFormat/grayAlpha8`` for gray with alpha or `tRNS`,
/// ``PixelFormat/rgb8`` for RGB or a palette without `tRNS`, ``PixelFormat/rgba8`` otherwise.
/// 16-bit samples keep their high byte; no gamma or colour-profile correction is applied (the pixels
/// are the stored values). Ancillary chunks other than `tRNS` (text, ICC profiles, EXIF, ...) are
/// skipped, so text-chunk decompression bombs cost nothing.
///
/// Encoding writes 8-bit gray, gray + alpha, RGB or RGBA PNG, losslessly.
///
/// The coder has no state: one value can be used from any number of threads at once. Decoding and
/// encoding are synchronous and CPU-bound; run them off actors that must stay responsive.
public struct PNGCoder: ProgressiveImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts with the PNG signature.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .png
    }

    /// Decodes a complete PNG file.
    ///
    /// The pixels are written by libpng straight into pooled memory. When ``DecodeOptions`` ask for a
    /// smaller size (``DecodeOptions/outputSize(forSource:)``), the image is decoded in full and then
    /// resampled (area average) to exactly that size.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: thumbnail size, scale-down limit, pixel-count limit and ``DecodeOptions/scale``
    ///     (recorded in ``Image/scale``), and whether to apply the Orientation of an `eXIf` chunk (default
    ///     yes; without, ``Image/orientation`` reports it). XMP orientation is ignored, as browsers do.
    /// - Returns: the image, with ``Image/format`` ``ImageFormat/png``.
    /// - Throws: ``ImageCodingError``:
    ///   - `unsupportedFormat` when the data is another recognised format (JPEG, GIF, ...);
    ///   - `imageTooLarge` when the header declares more than ``DecodeOptions/pixelCountLimit`` pixels,
    ///     or a side longer than 1,000,000 pixels (libpng's own limit)
    ///     (checked before any pixel memory is allocated);
    ///   - `truncatedData` when the data ends before the image and `IEND` are complete (never a partial image);
    ///   - `corruptData` with libpng's message for anything else wrong with the data;
    ///   - `insufficientMemory` when the pixels cannot be allocated.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        if sniffed != .png && sniffed != .unknown {
            throw ImageCodingError.unsupportedFormat(sniffed)
        }
        let session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: false)
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            guard try session.feed(bytes), let image = session.makeImage(scale: options.scale) else {
                throw ImageCodingError.truncatedData(format: .png)
            }
            return try PNGEXIFReader.finished(image, orientation: PNGEXIFReader.orientation(inPNG: bytes), options: options)
        }
    }

    /// Creates a decoder to feed one PNG file's bytes as they arrive.
    ///
    /// Its partial images hold the rows decoded so far (for interlaced files, every pass so far,
    /// pixels replicated over the columns later passes fill), the rest zero; its final image equals
    /// ``decode(_:options:)`` of the same bytes, byte for byte, with the same errors.
    /// - Parameter options: as for ``decode(_:options:)``; partial images are resized like the final one.
    public func makeIncrementalDecoder(options: DecodeOptions = DecodeOptions()) -> any IncrementalDecoder {
        PNGIncrementalDecoder(options: options)
    }

    /// Whether `format` is ``ImageFormat/png``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .png
    }

    /// Encodes `image` (its first frame) as a PNG file, losslessly, in the image's own pixel format.
    ///
    /// - Parameters:
    ///   - image: the pixels to write: ``PixelFormat/gray8``, ``PixelFormat/grayAlpha8``,
    ///     ``PixelFormat/rgb8`` or ``PixelFormat/rgba8``.
    ///   - format: must be ``ImageFormat/png``.
    ///   - options: ``EncodeOptions/pngCompressionLevel`` (zlib level, clamped to 0–9; default 3) and
    ///     ``EncodeOptions/maxPixelSize`` (when a side is longer, the image is first scaled down,
    ///     keeping its aspect ratio, with an area-averaging filter). Other options do not apply to PNG.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for a format other than
    ///   PNG; ``ImageCodingError/encodingFailed(format:reason:)`` with libpng's message if libpng fails;
    ///   ``ImageCodingError/insufficientMemory(byteCount:)`` if scaling down runs out of memory.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .png else {
            throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
        }
        var source = image
        if let limit = options.maxPixelSize, limit > 0, max(image.width, image.height) > limit {
            source = try Resampler.resample(image, to: Self.size(of: image.size, fittingSide: limit))
        }
        let channels: UInt32 = switch source.pixelFormat {
        case .gray8: 1
        case .grayAlpha8: 2
        case .rgb8: 3
        case .rgba8: 4
        }
        let largestSide = Int(Int32.max)
        guard source.width <= largestSide, source.height <= largestSide else {
            throw ImageCodingError.encodingFailed(
                format: .png, reason: "\(source.size) is larger than PNG allows (2^31 - 1 pixels a side)")
        }
        let level = Int32(min(max(options.pngCompressionLevel, 0), 9))
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let messageCapacity = 256
        var message = [CChar](repeating: 0, count: messageCapacity)
        let succeeded = source.withUnsafePixels { pixels in
            cpng_encode(
                pixels.bindMemory(to: UInt8.self).baseAddress!, UInt32(source.width), UInt32(source.height),
                source.bytesPerRow, channels, level, &output, &count, &message, messageCapacity)
        }
        guard succeeded != 0, let output else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw ImageCodingError.encodingFailed(format: .png, reason: reason)
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cpng_free(pointer) })
    }

    /// `size` scaled down, keeping its aspect ratio, so that its longer side is `side` (at least 1 pixel each).
    static func size(of size: PixelSize, fittingSide side: Int) -> PixelSize {
        let factor = Double(side) / Double(max(size.width, size.height))
        return PixelSize(
            width: min(side, max(1, Int((Double(size.width) * factor).rounded()))),
            height: min(side, max(1, Int((Double(size.height) * factor).rounded()))))
    }
}
