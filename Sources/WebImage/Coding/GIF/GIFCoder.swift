import CGIF
import Foundation

/// Decodes GIF (87a and 89a, still and animated) through giflib.
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
/// Encoding GIF is not supported yet (``canEncode(_:)`` is false). The coder has no state: one value
/// can be used from any number of threads at once. Decoding is synchronous and CPU-bound.
public struct GIFCoder: ImageCoder {
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

    /// `false`: GIF encoding is not supported yet.
    public func canEncode(_ format: ImageFormat) -> Bool { false }

    /// Always throws: GIF encoding is not supported yet.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)``.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
    }
}
