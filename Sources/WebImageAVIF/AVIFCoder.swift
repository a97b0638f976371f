import CAVIF
import Foundation
import WebImage

/// Decodes AVIF through libavif: register it once with `CoderRegistry.shared.add(AVIFCoder())`.
///
/// Handles 8, 10 and 12-bit images (reduced to 8-bit in one step by libavif's conversion), 4:2:0,
/// 4:2:2, 4:4:4 and monochrome, alpha, grids, and image sequences (every frame, with its duration;
/// AVIF has no loop count, so ``Image/loopCount`` is 0). Chroma is upsampled bilinearly. The
/// container's `clap`, `irot` and `imir` properties are the orientation step: with
/// ``DecodeOptions/applyOrientation`` (the default) the image is cropped, turned and mirrored as a
/// viewer shows it; without, the stored pixels come back whole with ``Image/orientation`` saying how
/// to turn them. Pixels are ``PixelFormat/rgba8`` with alpha, else ``PixelFormat/rgb8``. Encoding is
/// not supported yet. No ICC or HDR tone mapping is applied.
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

    /// `false`: AVIF encoding is not supported yet.
    public func canEncode(_ format: ImageFormat) -> Bool { false }

    /// Always throws: AVIF encoding is not supported yet.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)``.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat)
    }
}
