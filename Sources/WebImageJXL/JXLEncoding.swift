import CJXL
import Foundation
import WebImage

/// Writes ``Image``s as JPEG XL through libjxl (the encoding half of ``JXLCoder``).
enum JXLEncoding {
    static func encode(_ image: Image, options: EncodeOptions) throws(ImageCodingError) -> Data {
        let frames = try options.frames(of: image, keepingHighBitDepth: true).map { (frame) throws(ImageCodingError) in
            ImageFrame(image: try colour(frame.image), duration: frame.duration, storedDuration: frame.storedDuration)
        }
        let lossless = options.isLossless || options.clampedQuality >= 1
        let effort = options.clampedEffort.map { Int32(1 + ($0 * 8).rounded()) } ?? 0
        let loopCount = image.loopCount
        if lossless || frames.count > 1 {
            return try encode(frames, quality: lossless ? 100 : options.clampedQuality * 100, lossless: lossless, effort: effort,
                              loopCount: loopCount, profile: options.colorProfile)
        }
        return try options.encodingWithinMaxFileSize { (quality) throws(ImageCodingError) in
            try encode(frames, quality: quality * 100, lossless: false, effort: effort, loopCount: loopCount, profile: options.colorProfile)
        }
    }

    /// `image` as RGB or RGBA at its own depth (what the shim writes: 8 or 16 bits).
    private static func colour(_ image: Image) throws(ImageCodingError) -> Image {
        image.pixelFormat.isColor ? image
            : try image.converted(to: .layout(color: true, alpha: image.pixelFormat.hasAlpha, highBitDepth: image.pixelFormat.isHighBitDepth))
    }

    private static func encode(_ frames: [ImageFrame], quality: Double, lossless: Bool, effort: Int32, loopCount: Int,
                               profile: Data?) throws(ImageCodingError) -> Data {
        let first = frames[0].image
        guard frames.allSatisfy({ $0.image.size == first.size && $0.image.pixelFormat == first.pixelFormat }) else {
            throw .encodingFailed(format: .jxl, reason: "the frames of an animation must share one size and pixel format")
        }
        let durations = frames.map { UInt32(clamping: max(0, $0.storedMilliseconds)) }
        let icc = profile.map { [UInt8]($0) } ?? []
        var message = [CChar](repeating: 0, count: 256)
        var output: UnsafeMutablePointer<UInt8>?
        var count = 0
        // Every frame's pixels stay alive and unmoved while the shim reads them: the images own them.
        let pointers = frames.map { frame in frame.image.withUnsafePixels { UnsafePointer($0.baseAddress!.assumingMemoryBound(to: UInt8.self)) } }
        let status = withExtendedLifetime(frames) {
            pointers.withUnsafeBufferPointer { frameList in
                cjxl_encode(frameList.baseAddress!, Int32(frames.count), frames.count > 1 ? durations : nil, Int32(clamping: loopCount),
                            Int32(first.width), Int32(first.height), first.bytesPerRow, Int32(first.pixelFormat.channelCount),
                            Int32(first.pixelFormat.bitsPerChannel),
                            lossless ? 1 : 0, Float(quality), effort, icc.isEmpty ? nil : icc, icc.count, &output, &count,
                            &message, message.count)
            }
        }
        guard status == 0, let output else {
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .encodingFailed(format: .jxl, reason: reason)
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cjxl_free(pointer) })
    }
}
