import Foundation

/// Decodes and encodes Windows icons and cursors (ICO, CUR); part of the core, registered in
/// ``CoderRegistry/shared``.
///
/// An icon holds several pictures: the largest is decoded (width × height, a 0 in the directory meaning
/// 256; on a tie the deeper one, then the first), or the one nearest ``DecodeOptions/iconSide``. BMP
/// entries (1/4/8/24/32-bit, their AND mask making pixels transparent; a 32-bit entry's own alpha wins)
/// are read by the BMP decoder, PNG entries by ``PNGCoder``. A directory pointing outside the file, or
/// with no usable entry, is refused with a typed error.
///
/// Encodes one PNG-compressed 32-bit entry; an image larger than 256 pixels a side is first scaled down
/// to fit (ICO's largest size).
///
/// The coder has no state: one value can be used from any number of threads at once.
public struct ICOCoder: ImageCoder {
    /// Creates the coder.
    public init() {}

    /// Whether `data` starts with an ICO or CUR directory header.
    public func canDecode(_ data: Data) -> Bool {
        ImageFormat(sniffing: data) == .ico
    }

    /// Decodes one entry of a complete ICO or CUR file: the largest, or the one nearest
    /// ``DecodeOptions/iconSide``.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: the entry, the pixel-count limit (checked on the entry's declared size first),
    ///     thumbnail size or scale-down limit (applied after decoding) and ``DecodeOptions/scale``.
    /// - Returns: the entry's picture, with format ``ImageFormat/ico``.
    /// - Throws: ``ImageCodingError``: `unsupportedFormat` for another format; `corruptData` for a broken
    ///   directory or entry; `truncatedData`; `imageTooLarge`; what ``PNGCoder`` throws for a PNG entry.
    public func decode(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let sniffed = ImageFormat(sniffing: data)
        guard sniffed == .ico || sniffed == .unknown else { throw ImageCodingError.unsupportedFormat(sniffed) }
        let picked = try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) throws(ImageCodingError) -> Entry in
            do throws(RasterDecodingError) {
                let entries = try ICODecoding.entries(of: bytes)
                let index = options.iconSide.map { ICODecoding.entryIndex(nearest: $0, in: entries) } ?? ICODecoding.largestEntryIndex(entries)
                let entry = entries[index]
                if let raster = try ICODecoding.decodeBMPEntry(entry, in: bytes, maxPixelCount: options.pixelCountLimit) { return .bitmap(raster) }
                return .png(ICODecoding.pngByteRange(of: entry, in: bytes))
            } catch {
                throw error.codingError(format: .ico, limit: options.pixelCountLimit)
            }
        }
        switch picked {
        case .bitmap(let raster):
            return try raster.image(format: .ico, options: options)
        case .png(let range):
            let png = try PNGCoder().decode(data.subdata(in: (data.startIndex + range.lowerBound)..<(data.startIndex + range.upperBound)),
                                            options: options)
            return png.withFormat(.ico)
        }
    }

    /// The entry picked: decoded from its bitmap, or the bytes of its PNG file.
    private enum Entry {
        case bitmap(DecodedRaster)
        case png(Range<Int>)
    }

    /// Whether `format` is ``ImageFormat/ico``: the only format this coder writes.
    public func canEncode(_ format: ImageFormat) -> Bool { format == .ico }

    /// Encodes `image` (its first frame) as an icon with one PNG-compressed entry of at most 256 × 256.
    ///
    /// - Parameters:
    ///   - image: any ``PixelFormat``; alpha is kept.
    ///   - format: must be ``ImageFormat/ico``.
    ///   - options: ``EncodeOptions/maxPixelSize`` (never above 256) and ``EncodeOptions/pngCompressionLevel``.
    /// - Returns: the complete file.
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` for another format; what the PNG
    ///   encoder throws.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions = EncodeOptions()) throws -> Data {
        guard format == .ico else { throw ImageCodingError.unsupportedEncoding(format: format, pixelFormat: image.pixelFormat) }
        var entryOptions = options
        entryOptions.firstFrameOnly = true
        entryOptions.maxPixelSize = min(options.maxPixelSize.flatMap { $0 > 0 ? $0 : nil } ?? 256, 256)
        let frame = try entryOptions.frames(of: image)[0].image
        let rgba = frame.pixelFormat == .rgba8 ? frame : try frame.converted(to: .rgba8)
        var pngOptions = EncodeOptions(pngCompressionLevel: options.pngCompressionLevel)
        pngOptions.firstFrameOnly = true
        let png = try PNGCoder().encode(rgba, as: .png, options: pngOptions)
        return Data(ICOEncoding.encode(images: [ICOEncoding.Image(width: rgba.width, height: rgba.height, bitCount: 32, data: [UInt8](png), isPNG: true)]))
    }
}
