import CAVIF
import Foundation
import WebImage

/// Writes ``Image``s as AVIF through libavif (the encoding half of ``AVIFCoder``).
enum AVIFEncoding {
    static func encode(_ image: Image, options: EncodeOptions) throws(ImageCodingError) -> Data {
        // 16 bits (written as 12) for a still; a sequence's frames at 8.
        let frames = try options.frames(of: image, keepingHighBitDepth: !image.isAnimated || options.firstFrameOnly).map { (frame) throws(ImageCodingError) in
            ImageFrame(image: try colour(frame.image), duration: frame.duration, storedDuration: frame.storedDuration)
        }
        let lossless = options.isLossless || options.clampedQuality >= 1
        let speed = speed(forEffort: options.clampedEffort)
        let metadata = Metadata(colorProfile: options.colorProfile, exif: options.copyrightEXIF)
        if lossless || frames.count > 1 {
            return try encode(frames, quality: lossless ? 1 : options.clampedQuality, lossless: lossless, speed: speed, metadata: metadata)
        }
        return try options.encodingWithinMaxFileSize { (quality) throws(ImageCodingError) in
            try encode(frames, quality: quality, lossless: false, speed: speed, metadata: metadata)
        }
    }

    /// `image` as RGB or RGBA at its own depth (libavif converts nothing else).
    static func colour(_ image: Image) throws(ImageCodingError) -> Image {
        image.pixelFormat.isColor ? image
            : try image.converted(to: .layout(color: true, alpha: image.pixelFormat.hasAlpha, highBitDepth: image.pixelFormat.isHighBitDepth))
    }

    /// libavif's speed (10 fastest – 0 slowest) for an effort in 0...1; 6, as `avifenc`, for `nil`.
    static func speed(forEffort effort: Double?) -> Int32 {
        effort.map { Int32((10 - $0 * 10).rounded()) } ?? 6
    }

    /// AV1's quantizer for `quality` (0...1), as libavif 1.0 maps its 0–100 quality.
    static func quantizer(forQuality quality: Double) -> Int32 {
        let percent = Int((quality * 100).rounded())
        return Int32(((100 - percent) * 63 + 50) / 100)
    }

    /// What the file carries besides pixels: an ICC profile (`colr`) and an EXIF block (`Exif` item).
    struct Metadata {
        var colorProfile: Data?
        var exif: Data?
    }

    static func encode(_ frames: [ImageFrame], quality: Double, lossless: Bool, speed: Int32,
                       metadata: Metadata = Metadata()) throws(ImageCodingError) -> Data {
        let size = frames[0].image.size
        guard frames.allSatisfy({ $0.image.size == size }) else {
            throw .encodingFailed(format: .avif, reason: "the frames of a sequence must share one size")
        }
        guard let encoder = cavif_encoder_create(speed, quantizer(forQuality: quality), lossless ? 1 : 0, 1) else {
            throw .insufficientMemory(byteCount: 0)
        }
        defer { cavif_encoder_destroy(encoder) }
        if metadata.colorProfile != nil || metadata.exif != nil {
            let icc = [UInt8](metadata.colorProfile ?? Data()), exif = [UInt8](metadata.exif ?? Data())
            guard cavif_encoder_set_metadata(encoder, icc, icc.count, exif, exif.count) != 0 else {
                throw .encodingFailed(format: .avif, reason: String(cString: cavif_encoder_message(encoder)))
            }
        }
        for frame in frames {
            let image = frame.image
            let milliseconds = UInt64(max(1, frame.storedMilliseconds))
            let added = image.withUnsafePixels { pixels in
                cavif_encoder_add_depth(encoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(image.width),
                                        UInt32(image.height), image.bytesPerRow, Int32(image.pixelFormat.channelCount),
                                        Int32(image.pixelFormat.bitsPerChannel), milliseconds, frames.count == 1 ? 1 : 0)
            }
            guard added != 0 else { throw .encodingFailed(format: .avif, reason: String(cString: cavif_encoder_message(encoder))) }
        }
        var output: UnsafeMutablePointer<UInt8>?
        let count = cavif_encoder_finish(encoder, &output)
        guard count > 0, let output else {
            throw .encodingFailed(format: .avif, reason: String(cString: cavif_encoder_message(encoder)))
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .custom { pointer, _ in cavif_encoded_free(pointer) })
    }
}
