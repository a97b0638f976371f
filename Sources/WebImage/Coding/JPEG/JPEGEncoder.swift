import CJPEG
import Foundation

/// Writes ``Image``s as baseline JPEG through libjpeg-turbo (the encoding half of ``JPEGCoder``).
enum JPEGEncoder {
    /// Encodes `image` as JPEG.
    ///
    /// Gray images stay gray; colour images become YCbCr (4:4:4 from quality 0.9 up, 4:2:0 below).
    /// Alpha is composed over ``EncodeOptions/backgroundColor`` (a gray image over a coloured
    /// background becomes colour). ``EncodeOptions/maxPixelSize`` scales down first, keeping the
    /// aspect ratio. Quality 0...1 maps to libjpeg 1...100, searched downwards under
    /// ``EncodeOptions/maxFileSize``.
    /// - Throws: ``ImageCodingError/encodingFailed(format:reason:)`` with libjpeg's message, or
    ///   ``ImageCodingError/insufficientMemory(byteCount:)`` if scaling down runs out of memory.
    static func encode(_ image: Image, options: EncodeOptions) throws(ImageCodingError) -> Data {
        // JPEG cannot animate: the first frame, scaled under maxPixelSize as every encoder scales.
        var stillOptions = options
        stillOptions.firstFrameOnly = true
        let scaled = try stillOptions.frames(of: image)[0].image
        return try options.encodingWithinMaxFileSize { (quality) throws(ImageCodingError) in
            try encode(scaled, quality: quality, background: options.backgroundColor, progressive: options.isProgressive)
        }
    }

    /// One libjpeg encode of `source` at `quality` (0...1).
    static func encode(_ source: Image, quality: Double, background: PixelColor, progressive: Bool = false) throws(ImageCodingError) -> Data {
        let grayBackground = background.red == background.green && background.green == background.blue
        let source = try source.reducedToEightBits()
        let outComponents: Int32 = switch source.pixelFormat.channelCount {
        case 1: 1
        case 2: grayBackground ? 1 : 3
        default: 3
        }
        let backgroundBytes: [UInt8] = [background.red, background.green, background.blue]
        var encoded = cjpeg_encoded()
        let messageSize = 256
        var message = [CChar](repeating: 0, count: messageSize)
        let status = source.withUnsafePixels { pixels in
            backgroundBytes.withUnsafeBufferPointer { backgroundPointer in
                cjpeg_encode(pixels.baseAddress?.assumingMemoryBound(to: UInt8.self),
                             UInt32(source.width), UInt32(source.height), source.bytesPerRow,
                             Int32(source.pixelFormat.bytesPerPixel), outComponents,
                             Int32(max(1, (quality * 100).rounded())), quality >= 0.9 ? 1 : 0, progressive ? 1 : 0,
                             backgroundPointer.baseAddress, &encoded, &message, messageSize)
            }
        }
        guard status == 0, let bytes = encoded.bytes else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw .encodingFailed(format: .jpeg, reason: reason.isEmpty ? "libjpeg failed" : reason)
        }
        return Data(bytesNoCopy: bytes, count: encoded.count, deallocator: .free)
    }
}
