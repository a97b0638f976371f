import CWebP
import Foundation
import WebImage

/// Writes ``Image``s as WebP through libwebp (the encoding half of ``WebPCoder``): stills with
/// `WebPEncode`, animations with libwebpmux's `WebPAnimEncoder`.
enum WebPEncoding {
    static func encode(_ image: Image, options: EncodeOptions) throws(ImageCodingError) -> Data {
        let frames = try options.frames(of: image)
        let lossless = options.isLossless || options.clampedQuality >= 1
        let method = options.clampedEffort.map { Int32(($0 * 6).rounded()) } ?? 4
        if frames.count > 1 {
            return try encodeAnimation(frames, loopCount: image.loopCount, quality: options.clampedQuality,
                                       lossless: lossless, method: method)
        }
        let source = try webPCompatible(frames[0].image)
        if lossless { return try encodeStill(source, quality: 1, lossless: true, method: method) }
        return try options.encodingWithinMaxFileSize { (quality) throws(ImageCodingError) in
            try encodeStill(source, quality: quality, lossless: false, method: method)
        }
    }

    /// `image` as RGB or RGBA (libwebp imports nothing else).
    static func webPCompatible(_ image: Image) throws(ImageCodingError) -> Image {
        image.pixelFormat == .rgb8 || image.pixelFormat == .rgba8 ? image : try image.converted(to: image.pixelFormat.hasAlpha ? .rgba8 : .rgb8)
    }

    static func encodeStill(_ source: Image, quality: Double, lossless: Bool, method: Int32) throws(ImageCodingError) -> Data {
        var output: UnsafeMutablePointer<UInt8>?
        var error: Int32 = 0
        let count = source.withUnsafePixels { pixels in
            cwebp_encode(pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(source.width), Int32(source.height),
                         source.bytesPerRow, Int32(source.pixelFormat.bytesPerPixel), Float(quality * 100),
                         lossless ? 1 : 0, method, &output, &error)
        }
        guard count > 0, let output else {
            throw .encodingFailed(format: .webp, reason: "libwebp encoding error \(error)")
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cwebp_free(pointer) })
    }

    static func encodeAnimation(_ frames: [ImageFrame], loopCount: Int, quality: Double, lossless: Bool,
                                method: Int32) throws(ImageCodingError) -> Data {
        let size = frames[0].image.size
        guard frames.allSatisfy({ $0.image.size == size }) else {
            throw .encodingFailed(format: .webp, reason: "the frames of an animation must share one size")
        }
        guard let encoder = cwebp_animation_encoder_create(Int32(size.width), Int32(size.height),
                                                           Int32(clamping: max(loopCount, 0)), Float(quality * 100),
                                                           lossless ? 1 : 0, method) else {
            throw .encodingFailed(format: .webp, reason: "libwebpmux could not start an animation of \(size)")
        }
        defer { cwebp_animation_encoder_destroy(encoder) }
        var timestamp = 0
        for frame in frames {
            let pixels = try webPCompatible(frame.image)
            let added = pixels.withUnsafePixels { bytes in
                cwebp_animation_encoder_add(encoder, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self),
                                            pixels.bytesPerRow, Int32(pixels.pixelFormat.bytesPerPixel), Int32(clamping: timestamp))
            }
            guard added != 0 else {
                throw .encodingFailed(format: .webp, reason: String(cString: cwebp_animation_encoder_message(encoder)))
            }
            // libwebpmux wants strictly increasing timestamps: a stored 0 ms delay is written as 1 ms
            // (browsers play both as 100 ms).
            timestamp += max(1, frame.storedMilliseconds)
        }
        var output: UnsafeMutablePointer<UInt8>?
        let count = cwebp_animation_encoder_finish(encoder, Int32(clamping: timestamp), &output)
        guard count > 0, let output else {
            throw .encodingFailed(format: .webp, reason: String(cString: cwebp_animation_encoder_message(encoder)))
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cwebp_free(pointer) })
    }
}
