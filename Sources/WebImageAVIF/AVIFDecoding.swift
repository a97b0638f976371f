import CAVIF
import Foundation
import WebImage

/// One decode of one AVIF file's bytes.
struct AVIFDecoding {
    let bytes: UnsafeRawBufferPointer
    let options: DecodeOptions

    func decode() throws(ImageCodingError) -> Image {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw .truncatedData(format: .avif)
        }
        var result: Int32 = 0
        guard let decoder = cavif_decoder_create(base, bytes.count, &result) else { throw Self.error(result) }
        defer { cavif_decoder_destroy(decoder) }
        var info = CAVIFInfo()
        cavif_decoder_info(decoder, &info)
        let size = PixelSize(width: Int(info.width), height: Int(info.height))
        guard size.width > 0, size.height > 0 else { throw .corruptData(format: .avif, reason: "the image is \(size)") }
        guard size.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: size.width, height: size.height, limit: options.pixelCountLimit)
        }
        let frameCount = max(Int(info.frame_count), 1)
        try options.checkAnimationBudget(frameCount: frameCount, canvas: size)
        // A 10- or 12-bit still is kept at 16 bits when asked.
        let keeps16 = options.keepsHighBitDepth && info.depth > 8 && frameCount == 1
        let pixelFormat = PixelFormat.layout(color: true, alpha: info.has_alpha != 0, highBitDepth: keeps16)
        // Applied here (after the crop) or reported on the image for its caller to apply.
        let orientation = options.applyOrientation ? .up : ImageOrientation(exifValue: Int(info.exif_orientation))
        var frames: [ImageFrame] = []
        while frames.count < options.decodedFrameCount(of: frameCount) {
            var status: Int32 = 0
            var seconds = 0.0
            var image: Image
            do {
                image = try Image(width: size.width, height: size.height, pixelFormat: pixelFormat, format: .avif,
                                  scale: options.scale, orientation: orientation) { pixels, bytesPerRow in
                    status = cavif_decoder_next_depth(decoder, pixels.baseAddress!.assumingMemoryBound(to: UInt8.self), bytesPerRow,
                                                      Int32(pixelFormat.channelCount), Int32(pixelFormat.bitsPerChannel), &seconds)
                }
            } catch {
                throw .insufficientMemory(byteCount: size.pixelCount * pixelFormat.bytesPerPixel)
            }
            if cavif_result_kind(status) == .end, !frames.isEmpty { break }
            guard cavif_result_kind(status) == .OK else { throw Self.error(status) }
            if options.applyOrientation { image = try upright(image, info: info) }
            frames.append(ImageFrame(image: try image.fitted(to: options), duration: .milliseconds(Int((seconds * 1000).rounded()))))
        }
        return frames.count == 1 ? frames[0].image : try Image(frames: frames, loopCount: 0)
    }

    /// The clean aperture, then the rotation and mirroring: what a viewer shows (MIAF's order).
    /// `image` is labelled up; the crop applies to its stored pixels.
    private func upright(_ image: Image, info: CAVIFInfo) throws(ImageCodingError) -> Image {
        var result = image
        if info.has_crop != 0 {
            let rect = PixelRect(x: Int(info.crop_x), y: Int(info.crop_y), width: Int(info.crop_width), height: Int(info.crop_height))
            if rect.size != image.size {
                do {
                    result = try CroppingTransformer(rect: rect).transform(image, forKey: "")
                } catch {
                    throw .corruptData(format: .avif, reason: "the clean aperture \(rect) cannot be applied: \(error)")
                }
            }
        }
        return try result.withOrientation(ImageOrientation(exifValue: Int(info.exif_orientation))).oriented()
    }

    /// The ``ImageCodingError`` for a libavif avifResult.
    static func error(_ result: Int32) -> ImageCodingError {
        switch cavif_result_kind(result) {
        case .truncated: .truncatedData(format: .avif)
        case .noMemory: .insufficientMemory(byteCount: 0)
        case .notAVIF: .unsupportedFormat(.unknown)
        case .OK, .end, .failed: .corruptData(format: .avif, reason: String(cString: cavif_result_string(result)))
        }
    }
}
