import CGIF
import Foundation

/// One decode of one GIF file's bytes: checks the budget from a block walk, then composites frames
/// with giflib (CGIF) onto one canvas, copying it out after each frame.
struct GIFDecoding {
    let bytes: UnsafeRawBufferPointer
    let options: DecodeOptions

    /// Browsers play delays under 20 ms as 100 ms.
    static func playedDuration(ofStored stored: Duration) -> Duration {
        stored < .milliseconds(20) ? .milliseconds(100) : stored
    }

    func decode() throws(ImageCodingError) -> Image {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), !bytes.isEmpty else {
            throw .truncatedData(format: .gif)
        }
        var info = CGIFInfo()
        switch cgif_scan(base, bytes.count, &info) {
        case .notGIF: throw .unsupportedFormat(.unknown)
        case .truncated: throw .truncatedData(format: .gif)
        case .OK: break
        }
        let canvas = PixelSize(width: Int(info.canvas_width), height: Int(info.canvas_height))
        guard canvas.width > 0, canvas.height > 0 else {
            throw .corruptData(format: .gif, reason: "the canvas is \(canvas.width)x\(canvas.height)")
        }
        guard canvas.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: canvas.width, height: canvas.height, limit: options.pixelCountLimit)
        }
        guard info.frame_count > 0 else { throw .corruptData(format: .gif, reason: "the file has no frames") }
        try options.checkAnimationBudget(frameCount: Int(info.frame_count), canvas: canvas)

        var error: Int32 = 0
        guard let decoder = cgif_decoder_create(base, bytes.count, &error) else {
            throw .corruptData(format: .gif, reason: "giflib refused the header (error \(error))")
        }
        defer { cgif_decoder_destroy(decoder) }
        let canvasBytes = canvas.pixelCount * 4
        let working = try PixelStorage(byteCount: canvasBytes)
        working.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: canvasBytes)

        var frames: [(image: Image, stored: Duration)] = []
        let wanted = options.firstFrameOnly ? 1 : Int(info.frame_count)
        while frames.count < wanted {
            var frame = CGIFFrame()
            switch cgif_decoder_next_frame(decoder, working.bytes.assumingMemoryBound(to: UInt8.self), &frame) {
            case .drawn:
                let copy = try PixelStorage(byteCount: canvasBytes)
                copy.bytes.copyMemory(from: working.bytes, byteCount: canvasBytes)
                let image = Image(storage: copy, width: canvas.width, height: canvas.height, pixelFormat: .rgba8,
                                  bytesPerRow: canvas.width * 4, format: .gif, scale: options.scale)
                frames.append((try Resampler.fitted(image, options: options), .milliseconds(10 * Int(frame.delay_centiseconds))))
            case .end:
                guard !frames.isEmpty else { throw .corruptData(format: .gif, reason: "the file has no frames") }
                return Self.assemble(frames, loopCount: info.loop_count)
            case .noMemory:
                throw .insufficientMemory(byteCount: canvasBytes)
            case .failed:
                let message = String(cString: cgif_decoder_message(decoder))
                // giflib's D_GIF_ERR_READ_FAILED: the data ended inside a block.
                throw message.contains("Failed to read") ? .truncatedData(format: .gif) : .corruptData(format: .gif, reason: message)
            }
        }
        return Self.assemble(frames, loopCount: info.loop_count)
    }

    /// The first frame as the image, the others as its later frames.
    static func assemble(_ frames: [(image: Image, stored: Duration)], loopCount: Int32) -> Image {
        let first = frames[0]
        let later = frames.dropFirst().map {
            ImageFrame(image: $0.image, duration: playedDuration(ofStored: $0.stored), storedDuration: $0.stored)
        }
        guard !later.isEmpty else { return first.image }
        let frame = ImageFrame(image: first.image, duration: playedDuration(ofStored: first.stored), storedDuration: first.stored)
        // Every frame has the canvas's size: the init cannot fail.
        return (try? Image(frames: [frame] + later, loopCount: loopCount < 0 ? 1 : Int(loopCount))) ?? first.image
    }
}
