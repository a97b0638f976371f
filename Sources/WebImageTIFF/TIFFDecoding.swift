import CTIFF
import Foundation
import WebImage

/// One decode of one TIFF file's bytes (the decoding half of ``TIFFCoder``).
struct TIFFDecoding {
    let bytes: UnsafeRawBufferPointer
    let options: DecodeOptions

    /// libtiff's cap on any one of its allocations: room for the largest page the pixel limit allows at
    /// 16 bits and four samples (a strip of it), at least 256 MiB.
    private var allocationCap: Int {
        max(256 << 20, options.pixelCountLimit.multipliedReportingOverflow(by: 8).overflow ? Int.max : options.pixelCountLimit * 8)
    }

    private func open(_ message: inout [CChar]) throws(ImageCodingError) -> OpaquePointer {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count >= 8 else {
            throw .truncatedData(format: .tiff)
        }
        guard let decoder = ctiff_decoder_create(base, bytes.count, allocationCap, &message, message.count) else {
            throw Self.error(message)
        }
        return decoder
    }

    func pageCount() throws(ImageCodingError) -> Int {
        var message = [CChar](repeating: 0, count: 256)
        let decoder = try open(&message)
        defer { ctiff_decoder_destroy(decoder) }
        var info = ctiff_page_info()
        guard ctiff_decoder_select_page(decoder, 0, &info, &message, message.count) == 0 else { throw Self.error(message) }
        return Int(info.page_count)
    }

    func decode() throws(ImageCodingError) -> Image {
        var message = [CChar](repeating: 0, count: 256)
        let decoder = try open(&message)
        defer { ctiff_decoder_destroy(decoder) }
        var info = ctiff_page_info()
        if options.page > 0 {
            guard ctiff_decoder_select_page(decoder, 0, &info, &message, message.count) == 0 else { throw Self.error(message) }
            guard options.page < Int(info.page_count) else { throw .pageNotFound(page: options.page, pageCount: Int(info.page_count)) }
        }
        guard options.page >= 0 else { throw .pageNotFound(page: options.page, pageCount: Int(info.page_count)) }
        guard ctiff_decoder_select_page(decoder, Int32(options.page), &info, &message, message.count) == 0 else {
            throw Self.error(message)
        }
        let size = PixelSize(width: Int(info.width), height: Int(info.height))
        guard size.width > 0, size.height > 0 else { throw .corruptData(format: .tiff, reason: "the page is \(size)") }
        guard size.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: size.width, height: size.height, limit: options.pixelCountLimit)
        }
        // A 16-bit page is read at 16 bits when asked to keep them (every other depth at 8).
        let depth: Int32 = options.keepsHighBitDepth && info.bits == 16 ? 16 : 8
        let pixelFormat = PixelFormat.layout(color: info.channels >= 3, alpha: info.channels % 2 == 0, highBitDepth: depth == 16)
        var status: Int32 = 0
        var image: Image
        do {
            image = try Image(width: size.width, height: size.height, pixelFormat: pixelFormat, format: .tiff, scale: options.scale,
                              orientation: ImageOrientation(exifValue: Int(info.orientation))) { pixels, bytesPerRow in
                status = ctiff_decoder_read(decoder, depth, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), bytesPerRow,
                                            &message, message.count)
            }
        } catch {
            throw .insufficientMemory(byteCount: size.pixelCount * pixelFormat.bytesPerPixel)
        }
        guard status == 0 else { throw Self.error(message) }
        if options.convertsToSRGB {
            var count = 0
            if let profile = ctiff_decoder_icc(decoder, &count), count > 0 {
                SRGBConverter.convert(image, profile: Data(bytes: profile, count: count))
            }
        }
        if options.applyOrientation { image = try image.oriented() }
        return try image.fitted(to: options)
    }

    /// The shim's message as text.
    static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The ``ImageCodingError`` for the shim's message: "unsupported:" for a valid page outside what is
    /// read, anything else corrupt or truncated data.
    static func error(_ message: [CChar]) -> ImageCodingError {
        let text = text(message)
        if text.hasPrefix("unsupported:") {
            return .unsupportedFeature(format: .tiff, reason: text.dropFirst("unsupported:".count).trimmingCharacters(in: .whitespaces))
        }
        return .corruptData(format: .tiff, reason: text.isEmpty ? "libtiff refused the data" : text)
    }
}
