import CJXL
import Foundation
import WebImage

/// Decodes and encodes JPEG XL through libjxl 0.7: register it once with `CoderRegistry.shared.add(JXLCoder())`.
///
/// Decodes lossy (VarDCT) and lossless (modular) files, bare codestreams and the container, alpha (straight),
/// grey, animations (every displayed frame composited on the canvas, with its duration and the loop count),
/// and 9–32-bit samples reduced to 8 bits by libjxl's own conversion. The codestream's orientation is the
/// orientation step: with ``DecodeOptions/applyOrientation`` (the default) the image is turned as a viewer
/// shows it; without, the stored pixels come back with ``Image/orientation`` saying how. An XYB image whose
/// original colour space is an ICC profile is decoded to sRGB; any other non-sRGB colour space is converted
/// to sRGB with its ICC profile when ``DecodeOptions/convertsToSRGB`` is set.
///
/// Encoding writes 8-bit RGB or RGBA: lossy at a distance from ``EncodeOptions/compressionQuality``
/// (cjxl's mapping), lossless with ``EncodeOptions/isLossless`` (or quality 1), an animated image as a JPEG
/// XL animation, with the embedded ``EncodeOptions/colorProfile``.
///
/// The coder has no state: one value can be used from any number of threads at once. Every call runs on the
/// calling thread alone (no libjxl thread pool) and blocks until done.
public struct JXLCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts like a JPEG XL codestream or container.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .jxl
    }

    /// Decodes a complete JPEG XL file: its first frame, or every frame of an animation (the first only
    /// with ``DecodeOptions/firstFrameOnly``; the first ``DecodeOptions/maxDecodedFrames`` when set).
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the pixel-count limit (checked on the declared size before any pixel memory is
    ///     allocated), the animation budget (the frames are counted from their headers first), orientation,
    ///     thumbnail size or scale-down limit (applied after decoding), ``DecodeOptions/scale`` and
    ///     ``DecodeOptions/convertsToSRGB``.
    /// - Returns: the image, with format ``ImageFormat/jxl``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `imageTooLarge`;
    ///   `animationTooLarge`; `corruptData` for corrupt or truncated data, with the reason; `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .jxl || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try JXLDecoding(bytes: bytes, options: options).decode()
        }
    }

    /// Whether `format` is ``ImageFormat/jxl``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool { format == .jxl }

    /// Encodes `image` as JPEG XL: a still image, or an animated image with every frame, its stored
    /// duration and the image's loop count.
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat`` (grey is written as colour); alpha is kept.
    ///   - format: must be ``ImageFormat/jxl``.
    ///   - options: ``EncodeOptions/compressionQuality`` (0–1 as cjxl's 0–100 quality: distance
    ///     `0.1 + (100 − q) × 0.09` from 30 up; 1 writes lossless), ``EncodeOptions/isLossless``,
    ///     ``EncodeOptions/compressionEffort`` (libjxl effort `1 + round(effort × 8)`; default libjxl's 7),
    ///     ``EncodeOptions/maxFileSize`` (still lossy images), ``EncodeOptions/firstFrameOnly``,
    ///     ``EncodeOptions/maxPixelSize`` (every frame) and ``EncodeOptions/colorProfile``.
    /// - Returns: the complete file (a bare codestream).
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format;
    ///   ``ImageCodingError/encodingFailed(format:reason:)`` with the reason.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .jxl else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        return try JXLEncoding.encode(image, options: options)
    }
}
