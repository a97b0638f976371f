import CHEIF
import Foundation
import WebImage

/// Decodes HEIF and HEIC through libheif (HEVC through libde265): register it once with
/// `CoderRegistry.shared.add(HEIFCoder())`.
///
/// Decodes the primary image, with grids and overlays assembled, alpha, and 8/10/12-bit samples
/// reduced to 8 bits as libheif does. With ``DecodeOptions/applyOrientation`` (the default) the
/// item's `clap`, `irot` and `imir` are applied, as a viewer shows the image; without, the stored
/// pixels come back untransformed (``Image/orientation`` is then ``ImageOrientation/up``: libheif 1.15
/// does not report the transformations separately). Pixels are ``PixelFormat/rgba8``. Sequences
/// decode as their primary image.
///
/// Encoding writes HEIC (HEVC through the x265 plugin of the system's libheif, when it has one:
/// ``canEncode(_:)`` asks libheif): 8-bit 4:2:0 RGB or RGBA at a quality, or lossless, with the ICC profile.
///
/// The coder has no state: one value can be used from any number of threads at once. Decoding is
/// synchronous and CPU-bound.
public struct HEIFCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` is an ISO-BMFF file whose brands say HEIF or HEIC.
    public func canDecode(_ data: Data) -> Bool {
        let format = ImageFormat(sniffing: data)
        return format == .heif || format == .heic
    }

    /// Decodes a complete HEIF/HEIC file's primary image.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the pixel-count limit (checked on the declared size before decoding), orientation,
    ///     thumbnail size or scale-down limit (applied after decoding), and ``DecodeOptions/scale``.
    /// - Returns: the image, with format ``ImageFormat/heif`` or ``ImageFormat/heic`` as sniffed.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `imageTooLarge`;
    ///   `corruptData` with libheif's message (truncated files included); `insufficientMemory`.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .heif || sniffed == .heic || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        let format = sniffed == .unknown ? ImageFormat.heif : sniffed
        return try data.withUnsafeBytes { bytes throws(ImageCodingError) in
            try Self.decode(bytes, format: format, options: options)
        }
    }

    private static func decode(_ bytes: UnsafeRawBufferPointer, format: ImageFormat,
                               options: DecodeOptions) throws(ImageCodingError) -> Image {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw .truncatedData(format: format)
        }
        var message = [CChar](repeating: 0, count: 256)
        guard let decoder = cheif_decoder_create(base, bytes.count, &message, message.count) else {
            throw .corruptData(format: format, reason: Self.text(message))
        }
        defer { cheif_decoder_destroy(decoder) }
        var width: Int32 = 0, height: Int32 = 0, alpha: Int32 = 0
        cheif_decoder_info(decoder, &width, &height, &alpha)
        guard Int(width) * Int(height) <= options.pixelCountLimit else {
            throw .imageTooLarge(width: Int(width), height: Int(height), limit: options.pixelCountLimit)
        }
        guard cheif_decoder_decode(decoder, options.applyOrientation ? 0 : 1, &width, &height, &message, message.count) == 0 else {
            throw .corruptData(format: format, reason: Self.text(message))
        }
        let image: Image
        do {
            image = try Image(width: Int(width), height: Int(height), pixelFormat: .rgba8, format: format,
                              scale: options.scale) { pixels, bytesPerRow in
                cheif_decoder_copy(decoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), bytesPerRow)
            }
        } catch {
            throw .insufficientMemory(byteCount: Int(width) * Int(height) * 4)
        }
        return try image.fitted(to: options)
    }

    /// libheif's message, without the line break some end with.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether `format` is ``ImageFormat/heic`` and the system's libheif has an HEVC encoder.
    public func canEncode(_ format: ImageFormat) -> Bool {
        format == .heic && Self.hasHEVCEncoder
    }

    private static let hasHEVCEncoder = cheif_have_hevc_encoder() != 0

    /// Encodes `image` (its first frame) as HEIC.
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat`` (grey is written as colour); alpha is kept.
    ///   - format: must be ``ImageFormat/heic``.
    ///   - options: ``EncodeOptions/compressionQuality`` (0–1 as libheif's 0–100), ``EncodeOptions/isLossless``,
    ///     ``EncodeOptions/maxFileSize``, ``EncodeOptions/maxPixelSize`` and ``EncodeOptions/colorProfile``.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format or without an
    ///   encoder; ``ImageCodingError/encodingFailed(format:reason:)`` with libheif's reason.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard canEncode(format) else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        var single = options
        single.firstFrameOnly = true
        var frame = try single.frames(of: image)[0].image
        if !frame.pixelFormat.isColor { frame = try frame.converted(to: frame.pixelFormat.hasAlpha ? .rgba8 : .rgb8) }
        let icc = options.colorProfile.map { [UInt8]($0) } ?? []
        let lossless = options.isLossless
        return try options.encodingWithinMaxFileSize { (quality) throws(ImageCodingError) in
            var message = [CChar](repeating: 0, count: 256)
            var output: UnsafeMutablePointer<UInt8>?
            var count = 0
            let status = frame.withUnsafePixels { pixels in
                cheif_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(frame.width), Int32(frame.height),
                             frame.bytesPerRow, Int32(frame.pixelFormat.bytesPerPixel), Int32((quality * 100).rounded()),
                             lossless ? 1 : 0, icc.isEmpty ? nil : icc, icc.count, &output, &count, &message, message.count)
            }
            guard status == 0, let output else { throw .encodingFailed(format: .heic, reason: Self.text(message)) }
            return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cheif_free(pointer) })
        }
    }
}
