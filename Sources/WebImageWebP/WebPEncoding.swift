import CWebP
import Foundation
import WebImage

/// Writes ``Image``s as WebP through libwebp (the encoding half of ``WebPCoder``).
enum WebPEncoding {
    static func encode(_ image: Image, options: EncodeOptions) throws(ImageCodingError) -> Data {
        var source = image
        if let limit = options.maxPixelSize, limit > 0 {
            source = try image.fitted(to: DecodeOptions(thumbnailPixelSize: PixelSize(width: limit, height: limit)))
        }
        if source.pixelFormat == .gray8 || source.pixelFormat == .grayAlpha8 {
            source = try source.converted(to: source.pixelFormat.hasAlpha ? .rgba8 : .rgb8)
        }
        let quality = options.compressionQuality.isNaN ? 0.9 : min(max(options.compressionQuality, 0), 1)
        let lossless: Int32 = quality >= 1 ? 1 : 0
        var output: UnsafeMutablePointer<UInt8>?
        var error: Int32 = 0
        let count = source.withUnsafePixels { pixels in
            cwebp_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(source.width), Int32(source.height),
                         source.bytesPerRow, Int32(source.pixelFormat.bytesPerPixel), Float(quality * 100), lossless, 4,
                         &output, &error)
        }
        guard count > 0, let output else {
            throw .encodingFailed(format: .webp, reason: "libwebp encoding error \(error)")
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cwebp_free(pointer) })
    }
}
