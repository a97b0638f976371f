import CGIF
import Foundation

/// Decodes and encodes GIF (87a and 89a, still and animated) through giflib.
///
/// Every frame is the whole canvas after compositing, as browsers show it: global and local
/// palettes, transparency, interlacing, every disposal method (restoring to the background clears to
/// transparent, as browsers do), frames reaching outside the canvas clipped to it. Pixels are
/// ``PixelFormat/rgba8``. Timing follows browsers: a delay under 20 ms plays as 100 ms (the stored
/// delay stays in ``ImageFrame/storedDuration``); a file without a NETSCAPE loop extension plays once
/// (``Image/loopCount`` 1), 0 means forever.
///
/// Before anything is allocated the canvas counts against ``DecodeOptions/pixelCountLimit`` and the
/// whole animation against ``DecodeOptions/maxFrameCount`` and ``DecodeOptions/maxAnimationByteCount``;
/// ``DecodeOptions/firstFrameOnly`` decodes one frame and never reads the rest. Memory is the frames
/// kept plus one canvas and one row, whatever frame sizes the file declares.
///
/// Encoding writes still and animated GIF (see ``encode(_:as:options:)``). The coder has no state: one value
/// can be used from any number of threads at once. Decoding is synchronous and CPU-bound.
public struct GIFCoder: ProgressiveImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts with a GIF signature.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .gif
    }

    /// Decodes a complete GIF file: every frame, or the first with ``DecodeOptions/firstFrameOnly``.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: limits, ``DecodeOptions/firstFrameOnly``, and the thumbnail size or scale-down limit
    ///     (every frame is resampled to the same size); ``DecodeOptions/scale`` is recorded in ``Image/scale``.
    /// - Returns: the image (format ``ImageFormat/gif``), with its later frames and loop count.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `imageTooLarge` for a
    ///   canvas over the pixel limit; `animationTooLarge` past the frame budget; `corruptData` with
    ///   giflib's reason for a zero-sized canvas or frame, a file without frames, bad LZW data or pixel
    ///   data that ends early (never a partial image); `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .gif || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try GIFDecoding(bytes: bytes, options: options).decode()
        }
    }

    /// Creates a decoder to feed one GIF file's bytes as they arrive: each frame is composited as soon
    /// as its bytes are complete, and a partial image is the latest whole frame (`nil` before the
    /// first); ``IncrementalDecoder/finish()`` equals ``decode(_:options:)`` of the same bytes, errors
    /// included.
    /// - Parameter options: as for ``decode(_:options:)``.
    public func makeIncrementalDecoder(options: DecodeOptions = DecodeOptions()) -> any IncrementalDecoder {
        GIFIncrementalDecoder(options: options)
    }

    /// Whether `format` is ``ImageFormat/gif``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool { format == .gif }

    /// Encodes `image` as a GIF: a still image, or an animated image with every frame, its stored
    /// duration (in GIF's hundredths of a second) and the loop count (1, play once, writes no NETSCAPE
    /// extension; 0 loops forever).
    ///
    /// Each frame gets its own palette: a frame of at most 256 colours (alpha 0 or 255; transparent
    /// pixels (0, 0, 0, 0)) round-trips exactly; a richer one is quantized (median cut refined by
    /// k-means, nearest colour, no dithering). Alpha under 128 is transparent, the rest opaque.
    /// Frames are written whole, each disposed to transparent before the next.
    /// - Parameters:
    ///   - image: any ``PixelFormat``, at most 65535 pixels a side.
    ///   - format: must be ``ImageFormat/gif``.
    ///   - options: ``EncodeOptions/maxPixelSize`` (every frame) and ``EncodeOptions/firstFrameOnly``;
    ///     GIF is lossless after quantizing, so quality, effort and ``EncodeOptions/maxFileSize`` do not apply.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format;
    ///   ``ImageCodingError/encodingFailed(format:reason:)`` for a side over 65535 or a giflib failure;
    ///   ``ImageCodingError/insufficientMemory(byteCount:)``.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .gif else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        return try GIFEncoding.encode(image, options: options)
    }
}
