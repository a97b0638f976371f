import CAVIF
import Foundation
import WebImage

/// Decodes and encodes AVIF through libavif: register it once with `CoderRegistry.shared.add(AVIFCoder())`.
///
/// Handles 8, 10 and 12-bit images (reduced to 8-bit in one step by libavif's conversion), 4:2:0,
/// 4:2:2, 4:4:4 and monochrome, alpha, grids, and image sequences (every frame, with its duration;
/// AVIF has no loop count, so ``Image/loopCount`` is 0). Chroma is upsampled bilinearly. The
/// container's `clap`, `irot` and `imir` properties are the orientation step: with
/// ``DecodeOptions/applyOrientation`` (the default) the image is cropped, turned and mirrored as a
/// viewer shows it; without, the stored pixels come back whole with ``Image/orientation`` saying how
/// to turn them. Pixels are ``PixelFormat/rgba8`` with alpha, else ``PixelFormat/rgb8``. No ICC or HDR
/// tone mapping is applied.
///
/// Encoding (with libaom, as `avifenc` picks it) writes 8-bit 4:2:0 (lossless: 4:4:4 with the identity
/// matrix), alpha kept, and an animated image as an image sequence.
///
/// The coder has no state: one value can be used from any number of threads at once. Decoding is
/// synchronous and CPU-bound.
public struct AVIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` is an ISO-BMFF file whose brands say AVIF.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .avif
    }

    /// Decodes a complete AVIF file: the primary image, or every frame of a sequence (the first only
    /// with ``DecodeOptions/firstFrameOnly``).
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the pixel-count limit (checked on the container's size before any pixel memory is
    ///     allocated), the animation budget, orientation, thumbnail size or scale-down limit (applied
    ///     after decoding), and ``DecodeOptions/scale``.
    /// - Returns: the image, with format ``ImageFormat/avif``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `imageTooLarge`;
    ///   `animationTooLarge`; `truncatedData`; `corruptData` with libavif's reason; `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .avif || sniffed == .unknown || sniffed == .heif else { throw ImageCodingError.unsupportedFormat(sniffed) }
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try AVIFDecoding(bytes: bytes, options: options).decode()
        }
    }

    /// Whether `format` is ``ImageFormat/avif``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool { format == .avif }

    /// Encodes `image` as AVIF: a still image, or an animated image as an AVIF image sequence with every
    /// frame and its stored duration (libavif 0.11 writes no repetition count: players loop sequences).
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat`` (gray is written as colour); alpha is kept.
    ///   - format: must be ``ImageFormat/avif``.
    ///   - options: ``EncodeOptions/compressionQuality`` (0–1, mapped to AV1's quantizer 63–0 as libavif
    ///     1.0 maps its quality; 1 writes lossless), ``EncodeOptions/isLossless``,
    ///     ``EncodeOptions/compressionEffort`` (speed `round(10 − effort × 10)`; default 6, as `avifenc`),
    ///     ``EncodeOptions/maxFileSize`` (still lossy images), ``EncodeOptions/firstFrameOnly`` and
    ///     ``EncodeOptions/maxPixelSize`` (every frame). The encode runs on the calling thread alone.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format;
    ///   ``ImageCodingError/encodingFailed(format:reason:)`` with libavif's reason;
    ///   ``ImageCodingError/insufficientMemory(byteCount:)`` if scaling runs out of memory.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .avif else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        return try AVIFEncoding.encode(image, options: options)
    }
}
