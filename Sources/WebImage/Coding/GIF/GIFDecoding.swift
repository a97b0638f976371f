import CGIF
import Foundation

/// One decode of one GIF file's bytes: checks the budget from a block walk, then composites frames
/// with a ``GIFFrameReader``.
struct GIFDecoding {
    let bytes: UnsafeRawBufferPointer
    let options: DecodeOptions

    /// Browsers play delays under 20 ms as 100 ms.
    static func playedDuration(ofStored stored: Duration) -> Duration {
        stored < .milliseconds(20) ? .milliseconds(100) : stored
    }

    /// What a block walk of the whole file says, after the checks made before anything is allocated:
    /// a GIF, a canvas within the pixel limit, at least one frame, the animation within its budget.
    func checkedInfo() throws(ImageCodingError) -> CGIFInfo {
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
        try Self.checkCanvas(canvas, options: options)
        guard info.frame_count > 0 else { throw .corruptData(format: .gif, reason: "the file has no frames") }
        try options.checkAnimationBudget(frameCount: Int(info.frame_count), canvas: canvas)
        return info
    }

    /// The canvas checks: not empty, within ``DecodeOptions/pixelCountLimit``.
    static func checkCanvas(_ canvas: PixelSize, options: DecodeOptions) throws(ImageCodingError) {
        guard canvas.width > 0, canvas.height > 0 else {
            throw .corruptData(format: .gif, reason: "the canvas is \(canvas.width)x\(canvas.height)")
        }
        guard canvas.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: canvas.width, height: canvas.height, limit: options.pixelCountLimit)
        }
    }

    func decode() throws(ImageCodingError) -> Image {
        let info = try checkedInfo()
        let reader = try GIFFrameReader(bytes: bytes, canvas: PixelSize(width: Int(info.canvas_width), height: Int(info.canvas_height)),
                                        options: options)
        return try reader.finish(from: bytes, info: info)
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

/// Composites a GIF's frames one at a time onto one canvas with giflib (CGIF), copying it out after
/// each: the full decode reads them all at once, the incremental one as each frame's bytes complete.
final class GIFFrameReader {
    let canvas: PixelSize
    private let options: DecodeOptions
    private let decoder: OpaquePointer
    private let working: PixelStorage
    /// The frames composited so far (fitted to the options' size), with their stored delays.
    private(set) var frames: [(image: Image, stored: Duration)] = []
    /// Whether the file's last frame has been read.
    private(set) var reachedEnd = false

    /// Opens giflib over `bytes` (enough of the file for its header).
    /// - Throws: `corruptData` when giflib refuses the header; `insufficientMemory`.
    init(bytes: UnsafeRawBufferPointer, canvas: PixelSize, options: DecodeOptions) throws(ImageCodingError) {
        var error: Int32 = 0
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
              let decoder = cgif_decoder_create(base, bytes.count, &error) else {
            throw .corruptData(format: .gif, reason: "giflib refused the header (error \(error))")
        }
        self.decoder = decoder
        self.canvas = canvas
        self.options = options
        do {
            working = try PixelStorage(byteCount: canvas.pixelCount * 4)
        } catch {
            cgif_decoder_destroy(decoder)
            throw error
        }
        working.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: canvas.pixelCount * 4)
    }

    deinit {
        cgif_decoder_destroy(decoder)
    }

    /// Composites the next frame from `bytes` (the file so far, a longer copy of what was read
    /// before). Returns `false` when the file has no more frames.
    /// - Throws: `truncatedData` or `corruptData` with giflib's reason; `insufficientMemory`.
    func readFrame(from bytes: UnsafeRawBufferPointer) throws(ImageCodingError) -> Bool {
        guard !reachedEnd else { return false }
        cgif_decoder_set_data(decoder, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), bytes.count)
        let canvasBytes = canvas.pixelCount * 4
        var frame = CGIFFrame()
        switch cgif_decoder_next_frame(decoder, working.bytes.assumingMemoryBound(to: UInt8.self), &frame) {
        case .drawn:
            let copy = try PixelStorage(byteCount: canvasBytes)
            copy.bytes.copyMemory(from: working.bytes, byteCount: canvasBytes)
            let image = Image(storage: copy, width: canvas.width, height: canvas.height, pixelFormat: .rgba8,
                              bytesPerRow: canvas.width * 4, format: .gif, scale: options.scale)
            frames.append((try Resampler.fitted(image, options: options), .milliseconds(10 * Int(frame.delay_centiseconds))))
            return true
        case .end:
            reachedEnd = true
            return false
        case .noMemory:
            throw .insufficientMemory(byteCount: canvasBytes)
        case .failed:
            let message = String(cString: cgif_decoder_message(decoder))
            // giflib's D_GIF_ERR_READ_FAILED: the data ended inside a block.
            throw message.contains("Failed to read") ? .truncatedData(format: .gif) : .corruptData(format: .gif, reason: message)
        }
    }

    /// Reads the frames the options want from the whole file `bytes` (checked into `info`) and
    /// assembles the image.
    /// - Throws: as ``readFrame(from:)``; `corruptData` for a file without frames.
    func finish(from bytes: UnsafeRawBufferPointer, info: CGIFInfo) throws(ImageCodingError) -> Image {
        let wanted = options.decodedFrameCount(of: Int(info.frame_count))
        while frames.count < wanted, try readFrame(from: bytes) {}
        guard !frames.isEmpty else { throw .corruptData(format: .gif, reason: "the file has no frames") }
        return GIFDecoding.assemble(frames.count > wanted ? Array(frames.prefix(wanted)) : frames, loopCount: info.loop_count)
    }
}
