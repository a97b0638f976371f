import CWebP
import Foundation
import WebImage

/// Decodes and encodes WebP through libwebp: register it once with `CoderRegistry.shared.add(WebPCoder())`.
///
/// Decoding handles lossy and lossless files, alpha, extended (VP8X) files and animations. A still
/// image is decoded straight into its final memory, and a thumbnail or scale-down limit is applied by
/// libwebp's scaling on load: a 256 px thumbnail of a 24 MP file never holds the full-size image.
/// Animations are composited by libwebp's animation decoder (blending and disposal, as browsers
/// show them) into frames of the canvas size with their durations and loop count (0 = forever).
/// Pixels are ``PixelFormat/rgba8`` when the file has alpha or is lossless (whose pixels always carry
/// alpha, as dwebp decodes them), else ``PixelFormat/rgb8``.
/// The Orientation of a still file's `EXIF` chunk is applied with ``DecodeOptions/applyOrientation``
/// (the default), or reported in ``Image/orientation`` without it.
///
/// Encoding writes lossy (``EncodeOptions/compressionQuality``) or lossless WebP of the first frame.
///
/// The coder has no state: one value can be used from any number of threads at once. Decoding and
/// encoding are synchronous and CPU-bound; run them off actors that must stay responsive.
public struct WebPCoder: ProgressiveImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts with a RIFF/WEBP header.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .webp
    }

    /// Decodes a complete WebP file: every frame of an animation, or the first with
    /// ``DecodeOptions/firstFrameOnly``.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the pixel-count limit (checked on the header before anything is allocated), the
    ///     animation budget, the thumbnail size or scale-down limit, and ``DecodeOptions/scale``.
    /// - Returns: the image, with format ``ImageFormat/webp``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `imageTooLarge`;
    ///   `animationTooLarge`; `truncatedData` when the data ends early; `corruptData` with libwebp's
    ///   status for anything else; `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .webp || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try WebPDecoding(bytes: bytes, options: options).decode()
        }
    }

    /// Creates a decoder to feed one WebP file's bytes as they arrive: a still image decodes as they
    /// come (libwebp's `WebPIDecoder`, scaled on load), its partial images holding the rows decoded so
    /// far; ``IncrementalDecoder/finish()`` decodes the whole file as ``decode(_:options:)`` does, so
    /// it equals it, errors included (one more decode: WebPIDecoder's result differs on damaged data).
    /// - Parameter options: as for ``decode(_:options:)``.
    public func makeIncrementalDecoder(options: DecodeOptions = DecodeOptions()) -> any IncrementalDecoder {
        WebPIncrementalDecoder(options: options)
    }

    /// Whether `format` is ``ImageFormat/webp``.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .webp
    }

    /// Encodes `image` as WebP: a still image, or an animated image as an animated WebP (libwebpmux)
    /// with every frame, its stored duration and the loop count.
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat`` (gray is written as RGB); alpha is kept.
    ///   - format: must be ``ImageFormat/webp``.
    ///   - options: ``EncodeOptions/compressionQuality`` (0–1, libwebp's 0–100; 1 writes lossless),
    ///     ``EncodeOptions/isLossless`` (VP8L, exact even under alpha 0), ``EncodeOptions/compressionEffort``
    ///     (method `round(effort × 6)`, default 4 as `cwebp`), ``EncodeOptions/maxFileSize`` (still lossy
    ///     images), ``EncodeOptions/firstFrameOnly`` and ``EncodeOptions/maxPixelSize`` (every frame).
    ///     libwebpmux merges a frame identical to the one before into it, adding the durations; a
    ///     stored delay of 0 ms is written as 1 ms (timestamps must increase).
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format;
    ///   ``ImageCodingError/encodingFailed(format:reason:)`` with libwebp's error;
    ///   ``ImageCodingError/insufficientMemory(byteCount:)`` if scaling runs out of memory.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .webp else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        return try WebPEncoding.encode(image, options: options)
    }
}
