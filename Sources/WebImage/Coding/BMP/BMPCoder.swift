import Foundation

/// Decodes and encodes Windows bitmaps, written here (Debian has no small library for BMP); part of the
/// core, registered in ``CoderRegistry/shared``.
///
/// Decodes 1/2/4/8/16/24/32-bit files, RLE4 and RLE8, BI_BITFIELDS and BI_ALPHABITFIELDS with channels of
/// any width (scaled `round(v × 255 / max)`), top-down and bottom-up rows, OS/2 1.x and 2.x and Windows
/// v3–v5 headers; alpha only from an alpha mask (a 32-bit BI_RGB file is opaque), and pixels an RLE file
/// never writes are transparent, as browsers show them. Refused with a typed error: embedded JPEG/PNG,
/// OS/2 Huffman and RLE24, 64-bit; a run or delta past the image; sides over 65 535. The declared size is
/// checked against ``DecodeOptions/pixelCountLimit`` before anything is allocated.
///
/// Encodes 24-bit BI_RGB (opaque images) or 32-bit BI_BITFIELDS with an alpha mask (images with alpha);
/// grey is written as colour.
///
/// The coder has no state: one value can be used from any number of threads at once.
public struct BMPCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts with a BMP file header (`BM`).
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .bmp
    }

    /// Decodes a complete BMP file.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the pixel-count limit (checked on the declared size first), thumbnail size or
    ///     scale-down limit (applied after decoding) and ``DecodeOptions/scale``; BMP has no orientation.
    /// - Returns: the image (``PixelFormat/rgb8``, or ``PixelFormat/rgba8`` when it can have alpha), with
    ///   format ``ImageFormat/bmp``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `imageTooLarge`;
    ///   `truncatedData`; `corruptData`; `unsupportedFeature` for embedded JPEG/PNG, Huffman, RLE24, 64-bit.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .bmp || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        let raster = try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(ImageCodingError) -> DecodedRaster in
            do throws(RasterDecodingError) {
                return try BMPDecoding.decode(bytes, maxPixelCount: options.pixelCountLimit)
            } catch {
                throw error.codingError(format: .bmp, limit: options.pixelCountLimit)
            }
        }
        return try raster.image(format: .bmp, options: options)
    }

    /// Whether `format` is ``ImageFormat/bmp``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool { format == .bmp }

    /// Encodes `image` (its first frame) as a BMP file.
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat``; alpha is kept (32-bit with an alpha mask).
    ///   - format: must be ``ImageFormat/bmp``.
    ///   - options: ``EncodeOptions/maxPixelSize``; BMP is lossless and has no metadata.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format;
    ///   ``ImageCodingError/encodingFailed(format:reason:)`` for an image too large for BMP.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .bmp else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        var single = options
        single.firstFrameOnly = true
        let frame = try single.frames(of: image)[0].image
        let bytes = frame.withUnsafePixels { pixels in
            BMPEncoding.encode(width: frame.width, height: frame.height, channels: frame.pixelFormat.bytesPerPixel,
                               pixels: pixels, bytesPerRow: frame.bytesPerRow)
        }
        guard !bytes.isEmpty else { throw ImageCodingError.encodingFailed(format: .bmp, reason: "\(frame.size) is too large for a BMP file") }
        return Data(bytes)
    }
}

extension RasterDecodingError {
    /// The ``ImageCodingError`` a coder throws for this error of a `format` file decoded under `limit` pixels.
    func codingError(format: ImageFormat, limit: Int) -> ImageCodingError {
        switch self {
        case .truncated: .truncatedData(format: format)
        case .corrupt(let reason): .corruptData(format: format, reason: reason)
        case .unsupported(let reason): .unsupportedFeature(format: format, reason: reason)
        case .tooLarge(let width, let height): .imageTooLarge(width: width, height: height, limit: limit)
        }
    }
}

extension DecodedRaster {
    /// The raster as an ``Image`` of `format`, fitted to `options`' size limits.
    func image(format: ImageFormat, options: DecodeOptions) throws(ImageCodingError) -> Image {
        let pixelFormat: PixelFormat = switch channels {
        case 1: .gray8
        case 2: .grayAlpha8
        case 3: .rgb8
        default: .rgba8
        }
        let image: Image
        do {
            image = try Image(width: width, height: height, pixelFormat: pixelFormat, format: format, scale: options.scale) { target, bytesPerRow in
                pixels.withUnsafeBytes { source in
                    let row = width * channels
                    for y in 0..<height {
                        UnsafeMutableRawBufferPointer(rebasing: target[(y * bytesPerRow)..<(y * bytesPerRow + row)])
                            .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[(y * row)..<((y + 1) * row)]))
                    }
                }
            }
        } catch {
            throw .insufficientMemory(byteCount: width * height * channels)
        }
        return try image.fitted(to: options)
    }
}
