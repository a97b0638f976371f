import CWebP
import Foundation
import WebImage

/// One decode of one WebP file's bytes.
struct WebPDecoding {
    let bytes: UnsafeRawBufferPointer
    let options: DecodeOptions

    func decode() throws(ImageCodingError) -> Image {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw .truncatedData(format: .webp)
        }
        var info = CWebPInfo()
        let status = cwebp_info(base, bytes.count, &info)
        guard status == 0 else { throw Self.error(status) }
        let canvas = PixelSize(width: Int(info.width), height: Int(info.height))
        guard canvas.width > 0, canvas.height > 0 else { throw .corruptData(format: .webp, reason: "the image is \(canvas)") }
        guard canvas.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: canvas.width, height: canvas.height, limit: options.pixelCountLimit)
        }
        if info.frame_count > 1 {
            try options.checkAnimationBudget(frameCount: Int(info.frame_count), canvas: canvas)
            return try decodeAnimation(base, canvas: canvas, frameCount: Int(info.frame_count), loopCount: Int(info.loop_count))
        }
        // A lossless bitstream decodes its alpha even when the header's hint says there is none (dwebp
        // keeps it too: libwebp's test vector bad_palette_index.webp).
        let still = try decodeStill(base, size: canvas, hasAlpha: info.has_alpha != 0 || info.is_lossless != 0)
        return try oriented(still, base)
    }

    /// `image` labelled with the Orientation of the file's `EXIF` chunk and, when the options say so,
    /// turned upright (as browsers show a WebP).
    private func oriented(_ image: Image, _ base: UnsafePointer<UInt8>) throws(ImageCodingError) -> Image {
        var offset = 0, length = 0
        guard cwebp_exif(base, bytes.count, &offset, &length) != 0, offset + length <= bytes.count else { return image }
        let labelled = image.withOrientation(ImageOrientation(exif: Data(bytes[offset..<(offset + length)])))
        return options.applyOrientation ? try labelled.oriented() : labelled
    }

    /// Decodes straight into the image's memory, scaled on load to the size the options ask for. An
    /// image with alpha is decoded at full size and resized premultiplied instead: libwebp's scaler
    /// filters straight alpha, which leaves halos round shapes (lossy_alpha1.webp at 24 px: visible
    /// pixels off by 112 on average against a premultiplied resize; ScaledDecodeAlphaTests).
    private func decodeStill(_ base: UnsafePointer<UInt8>, size: PixelSize, hasAlpha: Bool) throws(ImageCodingError) -> Image {
        let wanted = options.outputSize(forSource: size)
        if hasAlpha && wanted != size {
            return try decodeStill(base, size: size, target: size, hasAlpha: true).fitted(to: options)
        }
        return try decodeStill(base, size: size, target: wanted, hasAlpha: hasAlpha)
    }

    private func decodeStill(_ base: UnsafePointer<UInt8>, size: PixelSize, target: PixelSize, hasAlpha: Bool) throws(ImageCodingError) -> Image {
        let pixelFormat: PixelFormat = hasAlpha ? .rgba8 : .rgb8
        var status: Int32 = 0
        let count = bytes.count
        do {
            let image = try Image(width: target.width, height: target.height, pixelFormat: pixelFormat, format: .webp,
                                  scale: options.scale) { pixels, bytesPerRow in
                status = cwebp_decode(base, count, Int32(pixelFormat.bytesPerPixel), Int32(target.width), Int32(target.height),
                                      pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), bytesPerRow)
            }
            guard status == 0 else { throw Self.error(status) }
            return image
        } catch let error as ImageCodingError {
            throw error
        } catch {
            throw .insufficientMemory(byteCount: target.pixelCount * pixelFormat.bytesPerPixel)
        }
    }

    /// Composites every frame (or the first) with libwebp's animation decoder, copying each canvas out.
    private func decodeAnimation(_ base: UnsafePointer<UInt8>, canvas: PixelSize, frameCount: Int,
                                 loopCount: Int) throws(ImageCodingError) -> Image {
        guard let animation = cwebp_animation_create(base, bytes.count) else {
            throw .corruptData(format: .webp, reason: "libwebp refused the animation")
        }
        defer { cwebp_animation_destroy(animation) }
        let canvasBytes = canvas.pixelCount * 4
        var frames: [ImageFrame] = []
        var previousEnd = 0
        let wanted = options.decodedFrameCount(of: frameCount)
        while frames.count < wanted {
            var pointer: UnsafePointer<UInt8>?
            var timestamp: Int32 = 0
            let step = cwebp_animation_next(animation, &pointer, &timestamp)
            if step == 0 { break }
            guard step > 0, let pointer else { throw .corruptData(format: .webp, reason: "frame \(frames.count) is corrupt") }
            var frame: Image
            do {
                frame = try Image(width: canvas.width, height: canvas.height, pixelFormat: .rgba8, format: .webp,
                                  scale: options.scale) { pixels, _ in
                    pixels.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: canvasBytes))
                }
            } catch {
                throw .insufficientMemory(byteCount: canvasBytes)
            }
            frame = try frame.fitted(to: options)
            let duration = Duration.milliseconds(Int(timestamp) - previousEnd)
            previousEnd = Int(timestamp)
            frames.append(ImageFrame(image: frame, duration: duration))
        }
        guard !frames.isEmpty else { throw .corruptData(format: .webp, reason: "the animation has no frames") }
        return try Image(frames: frames, loopCount: loopCount)
    }

    /// The ``ImageCodingError`` for a libwebp VP8StatusCode.
    static func error(_ status: Int32) -> ImageCodingError {
        switch status {
        case 1: .insufficientMemory(byteCount: 0)                       // VP8_STATUS_OUT_OF_MEMORY
        case 4: .unsupportedFeature(format: .webp, reason: "libwebp does not support this file's features")
        case 7: .truncatedData(format: .webp)                            // VP8_STATUS_NOT_ENOUGH_DATA
        default: .corruptData(format: .webp, reason: "libwebp status \(status) (\(status == 3 ? "bitstream error" : "invalid"))")
        }
    }
}
