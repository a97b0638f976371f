import CJXL
import Foundation
import WebImage

/// One decode of one JPEG XL file's bytes (the decoding half of ``JXLCoder``).
struct JXLDecoding {
    let bytes: UnsafeRawBufferPointer
    let options: DecodeOptions

    func decode() throws(ImageCodingError) -> Image {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw .truncatedData(format: .jxl)
        }
        var message = [CChar](repeating: 0, count: 256)
        var info = cjxl_info()
        // No memory cap here: the size is checked against the caller's limit below, before any pixel memory.
        guard let decoder = cjxl_decoder_create(base, bytes.count, 0, &info, &message, message.count) else {
            throw Self.error(message)
        }
        defer { cjxl_decoder_destroy(decoder) }
        let size = PixelSize(width: Int(info.width), height: Int(info.height))
        guard size.width > 0, size.height > 0 else { throw .corruptData(format: .jxl, reason: "the image is \(size)") }
        guard size.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: size.width, height: size.height, limit: options.pixelCountLimit)
        }
        var frameCount = 1
        if info.have_animation != 0, options.decodedFrameCount(of: Int.max) > 1 {
            // Counted from the frame headers alone (no pixels), stopping one past the limit.
            let counted = cjxl_count_frames(base, bytes.count, Int32(clamping: options.maxFrameCount), &message, message.count)
            guard counted > 0 else { throw Self.error(message) }
            frameCount = Int(counted)
            try options.checkAnimationBudget(frameCount: frameCount, canvas: size)
        }
        // More than 8 bits per sample are kept (as 16) for a still when asked.
        let keeps16 = options.keepsHighBitDepth && info.bits > 8 && frameCount == 1 && info.have_animation == 0
        let pixelFormat = PixelFormat.layout(color: info.is_grey == 0, alpha: info.has_alpha != 0, highBitDepth: keeps16)
        let decoded: PixelFormat = keeps16 ? .rgba16 : .rgba8
        let orientation = ImageOrientation(exifValue: Int(info.orientation))
        let profile: Data? = cjxl_decoder_is_srgb(decoder) != 0 ? nil : {
            var count = 0
            return cjxl_decoder_icc(decoder, &count).map { Data(bytes: $0, count: count) }
        }()
        var frames: [ImageFrame] = []
        while frames.count < options.decodedFrameCount(of: frameCount) {
            var status: Int32 = 0
            var ticks: UInt32 = 0
            var frame: Image
            do {
                frame = try Image(width: size.width, height: size.height, pixelFormat: decoded, format: .jxl,
                                  scale: options.scale, orientation: orientation) { pixels, bytesPerRow in
                    var width: Int32 = 0, height: Int32 = 0
                    status = cjxl_decoder_next_frame(decoder, keeps16 ? 16 : 8, 1, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), bytesPerRow,
                                                     &width, &height, &ticks, &message, message.count)
                }
            } catch {
                throw .insufficientMemory(byteCount: size.pixelCount * decoded.bytesPerPixel)
            }
            if status == 0, !frames.isEmpty { break }
            guard status == 1 else { throw status == 0 ? .corruptData(format: .jxl, reason: "the file has no frame") : Self.error(message) }
            if pixelFormat != decoded { frame = try frame.converted(to: pixelFormat) }
            if options.convertsToSRGB, let profile { SRGBConverter.convert(frame, profile: profile) }
            if options.applyOrientation { frame = try frame.oriented() }
            frames.append(ImageFrame(image: try frame.fitted(to: options), duration: duration(ticks: ticks, info: info)))
        }
        return frames.count == 1 && info.have_animation == 0 ? frames[0].image
            : try Image(frames: frames, loopCount: Int(info.loop_count))
    }

    /// A frame's duration: ticks × 1000 × denominator ÷ numerator milliseconds.
    private func duration(ticks: UInt32, info: cjxl_info) -> Duration {
        guard info.tps_numerator > 0 else { return .zero }
        let milliseconds = Double(ticks) * 1000 * Double(info.tps_denominator) / Double(info.tps_numerator)
        return .milliseconds(Int(milliseconds.rounded()))
    }

    /// The ``ImageCodingError`` for the shim's message: truncation, a refusal of what is not supported,
    /// or corruption.
    static func error(_ message: [CChar]) -> ImageCodingError {
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.contains("truncated") || text.contains("missing input") { return .truncatedData(format: .jxl) }
        return .corruptData(format: .jxl, reason: text.isEmpty ? "libjxl refused the data" : text)
    }
}
