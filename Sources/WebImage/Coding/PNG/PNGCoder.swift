import CPNG
import Foundation

/// Decodes PNG through libpng (the common files through libdeflate, to the same pixels) and encodes it through libdeflate.
///
/// Decoding handles every colour type and bit depth (1, 2, 4, 8, 16), palettes, `tRNS` transparency
/// and Adam7 interlacing. The result uses the smallest ``PixelFormat`` that holds the file without loss:
/// ``PixelFormat/gray8`` for gray, ``PixelFormat/grayAlpha8`` for gray with alpha or `tRNS`,
/// ``PixelFormat/rgb8`` for RGB or a palette without `tRNS`, ``PixelFormat/rgba8`` otherwise.
/// 16-bit samples keep their high byte; no gamma or colour-profile correction is applied (the pixels
/// are the stored values). Ancillary chunks other than `tRNS` (text, ICC profiles, EXIF, ...) are
/// skipped, so text-chunk decompression bombs cost nothing.
///
/// Animated PNG (APNG: `acTL`, `fcTL`, `fdAT`) decodes to every frame, composited to the full canvas
/// as ``PixelFormat/rgba8`` with its blend and dispose operations applied, its delay and the file's
/// `num_plays` as ``Image/loopCount``; see `APNGDecoding` for the rules, and a PNG whose animation is
/// broken decodes as its still image, as browsers show it. The frame budget
/// (``DecodeOptions/maxFrameCount``, ``DecodeOptions/maxAnimationByteCount``) is checked before any frame
/// is decoded; ``DecodeOptions/firstFrameOnly`` decodes the default image alone.
///
/// Encoding writes 8-bit gray, gray + alpha, RGB or RGBA PNG, losslessly, and an animated image as APNG.
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
    /// The pixels are written by libpng straight into pooled memory; the common 8-bit, non-interlaced
    /// files without palette or `tRNS` are inflated with libdeflate instead (`PNGFastDecoder`), to the
    /// same pixels, and anything it does not take is decoded by libpng. When ``DecodeOptions`` ask for a
    /// smaller size (``DecodeOptions/outputSize(forSource:)``), the image is decoded in full and then
    /// resampled (area average) to exactly that size. An animated PNG yields every frame (see the type's
    /// documentation), each resized alike.
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
    ///   - `animationTooLarge` when an animation's frames are past the budget (before any frame is decoded);
    ///   - `corruptData` with libpng's message for anything else wrong with the data;
    ///   - `insufficientMemory` when the pixels cannot be allocated.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        if sniffed != .png && sniffed != .unknown {
            throw ImageCodingError.unsupportedFormat(sniffed)
        }
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            let orientation = PNGEXIFReader.orientation(inPNG: bytes)
            if let image = PNGFastDecoder.decode(bytes, pixelCountLimit: options.pixelCountLimit, scale: options.scale) {
                return try Self.finished(image, bytes: bytes, orientation: orientation, options: options)
            }
            // libpng reads the whole file first, an animated one too: its verdict on the file is the
            // incremental decoder's (found by fuzz-png), and its image is the default image.
            let session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: false,
                                               keepsHighBitDepth: options.keepsHighBitDepth)
            guard try session.feed(bytes), let image = session.makeImage(scale: options.scale) else {
                throw ImageCodingError.truncatedData(format: .png)
            }
            return try Self.finished(image, bytes: bytes, orientation: orientation, options: options)
        }
    }

    /// The image the whole file `bytes` decodes to, given `still`, libpng's decode of it (the default
    /// image): every composited frame of an animated PNG with more than one frame and a sound
    /// animation (unless ``DecodeOptions/firstFrameOnly``), else `still` oriented and fitted. A broken
    /// animation decodes as the still image.
    /// - Throws: `animationTooLarge` past the budget (before any further frame is decoded);
    ///   `insufficientMemory`.
    static func finished(_ still: Image, bytes: UnsafeRawBufferPointer, orientation: ImageOrientation,
                         options: DecodeOptions) throws(ImageCodingError) -> Image {
        if !options.firstFrameOnly, let structure = APNGStructure.parse(bytes), structure.canvas == still.size {
            let animation = APNGDecoding(bytes: bytes, structure: structure, options: options, orientation: orientation)
            if animation.frameCount > 1 {
                // An animation is composited at 8 bits: a default image kept at 16 is read again at 8, as its frames are.
                let defaultImage = still.pixelFormat.isHighBitDepth ? try eightBitStill(bytes, options: options) : still
                if let image = try animation.decode(defaultImage: defaultImage) { return image }
            }
        }
        return try PNGEXIFReader.finished(still, orientation: orientation, options: options)
    }

    /// libpng's decode of the whole file `bytes` at 8 bits per channel.
    private static func eightBitStill(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions) throws(ImageCodingError) -> Image {
        let session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: false)
        guard try session.feed(bytes), let image = session.makeImage(scale: options.scale) else { throw .truncatedData(format: .png) }
        return image
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

    /// Encodes `image` as a PNG file, losslessly, in the image's own pixel format; an animated image
    /// as an animated PNG (APNG) with every frame, its duration and the loop count.
    ///
    /// An APNG's frames are written whole (blend `SOURCE`, dispose `NONE`) with their stored
    /// durations in milliseconds (at most 65.535 s); viewers without APNG support show the first frame.
    ///
    /// - Parameters:
    ///   - image: the pixels to write, in any ``PixelFormat``: a 16-bit still is written with 16-bit
    ///     samples (an animation with 8); frames of different formats are written as RGBA.
    ///   - format: must be ``ImageFormat/png``.
    ///   - options: ``EncodeOptions/pngCompressionLevel`` (0–9 on zlib's scale, clamped; default 3),
    ///     ``EncodeOptions/maxPixelSize`` (when a side is longer, every frame is first scaled down,
    ///     keeping its aspect ratio, with an area-averaging filter) and ``EncodeOptions/firstFrameOnly``.
    ///     Other options do not apply to PNG.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for a format other than
    ///   PNG; ``ImageCodingError/encodingFailed(format:reason:)`` with the reason if the encoder fails (no memory);
    ///   ``ImageCodingError/insufficientMemory(byteCount:)`` if scaling down runs out of memory.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .png else {
            throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
        }
        let frames = try options.frames(of: image, keepingHighBitDepth: !image.isAnimated || options.firstFrameOnly)
        let level = Int32(min(max(options.pngCompressionLevel, 0), 9))
        guard frames.count > 1 else { return try Self.encodeStill(frames[0].image, level: level) }
        return try APNGEncoding.encode(frames, loopCount: image.loopCount, level: level)
    }

    /// One still PNG file of `source`'s pixels at zlib `level`.
    static func encodeStill(_ source: Image, level: Int32) throws(ImageCodingError) -> Data {
        let channels = UInt32(source.pixelFormat.channelCount)
        let largestSide = Int(Int32.max)
        guard source.width <= largestSide, source.height <= largestSide else {
            throw .encodingFailed(format: .png, reason: "\(source.size) is larger than PNG allows (2^31 - 1 pixels a side)")
        }
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        let messageCapacity = 256
        var message = [CChar](repeating: 0, count: messageCapacity)
        let succeeded = source.withUnsafePixels { pixels in
            cpng_encode_depth(
                pixels.bindMemory(to: UInt8.self).baseAddress!, UInt32(source.width), UInt32(source.height),
                source.bytesPerRow, channels, UInt32(source.pixelFormat.bitsPerChannel), level, &output, &count, &message, messageCapacity)
        }
        guard succeeded != 0, let output else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw .encodingFailed(format: .png, reason: reason)
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
