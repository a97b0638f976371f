import Foundation

/// One decode of an animated PNG: each frame's data is decoded by libpng as a PNG stream of its own
/// (Debian's libpng has no APNG patch), then composited onto the canvas as apngdis, FFmpeg and browsers
/// do.
///
/// - The canvas starts transparent black. `APNG_BLEND_OP_SOURCE` replaces the frame's rectangle;
///   `APNG_BLEND_OP_OVER` composes with straight alpha in integer arithmetic (the corpus reference's,
///   apngdis's, rounding).
/// - After a frame is shown, `APNG_DISPOSE_OP_BACKGROUND` clears its rectangle to transparent and
///   `APNG_DISPOSE_OP_PREVIOUS` restores the canvas from before it (on the first frame it clears, as
///   the specification says).
/// - A default image that is not part of the animation comes first, with a zero duration, as apngdis
///   lists it (and as the manifest's first-frame checksum is); the animation then starts on a clear canvas.
/// - Delays are `delay_num / delay_den` seconds (a zero denominator means 1/100 s), stored in
///   ``ImageFrame/storedDuration``; a delay under 20 ms plays as 100 ms, as for GIF.
/// - libpng decodes the whole file first (its verdict on the file is the decode's, as for the
///   incremental decoder), and that image is the default one; a frame whose data does not decode then
///   makes the file decode as that still image, as browsers show a PNG with a broken animation.
struct APNGDecoding {
    let bytes: UnsafeRawBufferPointer
    let structure: APNGStructure
    let options: DecodeOptions
    /// The `eXIf` chunk's orientation, which every frame gets.
    let orientation: ImageOrientation

    /// The number of frames the decode yields (the hidden default image counts).
    var frameCount: Int { structure.frames.count + (structure.defaultImageIsFrame ? 0 : 1) }

    /// The composited frames, or `nil` when a frame is broken and the caller should return the still image.
    /// - Parameter defaultImage: libpng's decode of the whole file (the `IDAT` image, canvas-sized):
    ///   the first frame's pixels when the default image is part of the animation, else the hidden
    ///   first frame.
    func decode(defaultImage: Image) throws(ImageCodingError) -> Image? {
        let canvas = structure.canvas
        try options.checkAnimationBudget(frameCount: frameCount, canvas: canvas)
        let still = defaultImage.pixelFormat == .rgba8 ? defaultImage : try defaultImage.converted(to: .rgba8)
        var frames: [ImageFrame] = []
        if !structure.defaultImageIsFrame {
            frames.append(ImageFrame(image: try fitted(still), duration: .zero, storedDuration: .zero))
        }
        let rowBytes = canvas.width * 4
        let working = try PixelStorage(byteCount: rowBytes * canvas.height)
        let canvasBytes = working.bytes.assumingMemoryBound(to: UInt8.self)
        canvasBytes.initialize(repeating: 0, count: rowBytes * canvas.height)
        var saved: [UInt8] = []
        let kept = options.decodedFrameCount(of: frameCount)
        for index in structure.frames.indices where frames.count < kept {
            let control = structure.frames[index].control
            let decoded: Image
            if index == 0 && structure.defaultImageIsFrame {
                decoded = still                                 // the IDAT data, decoded already
            } else {
                let stream = structure.stream(ofFrame: index, in: bytes)
                let result = stream.withUnsafeBytes { stream in
                    Result { () throws(ImageCodingError) in try decodeStream(stream, size: control.rect.size) }
                }
                guard let frame = try result.get() else { return nil }
                decoded = frame
            }
            let dispose = index == 0 && control.disposeOp == 2 ? 1 : control.disposeOp
            if dispose == 2 { saved = Array(UnsafeBufferPointer(start: canvasBytes, count: rowBytes * canvas.height)) }
            Self.compose(decoded, onto: canvasBytes, canvasRowBytes: rowBytes, at: control.rect, over: control.blendOp == 1)
            let copy = try PixelStorage(byteCount: rowBytes * canvas.height)
            copy.bytes.copyMemory(from: working.bytes, byteCount: rowBytes * canvas.height)
            let shown = Image(storage: copy, width: canvas.width, height: canvas.height, pixelFormat: .rgba8,
                              bytesPerRow: rowBytes, format: .png, scale: options.scale)
            let stored = control.delay
            frames.append(ImageFrame(image: try fitted(shown), duration: GIFDecoding.playedDuration(ofStored: stored),
                                     storedDuration: stored))
            switch dispose {
            case 1:
                for row in control.rect.y..<(control.rect.y + control.rect.height) {
                    (canvasBytes + row * rowBytes + control.rect.x * 4).update(repeating: 0, count: control.rect.width * 4)
                }
            case 2:
                saved.withUnsafeBufferPointer { canvasBytes.update(from: $0.baseAddress!, count: $0.count) }
            default:
                break
            }
        }
        return try Image(frames: frames, loopCount: structure.loopCount)
    }

    /// `image` labelled with the file's orientation, turned and resized as the options ask (every frame alike).
    private func fitted(_ image: Image) throws(ImageCodingError) -> Image {
        try PNGEXIFReader.finished(image, orientation: orientation, options: options)
    }

    /// One PNG stream decoded to RGBA; `nil` when its data is broken or its size is not `size`.
    private func decodeStream(_ stream: UnsafeRawBufferPointer, size: PixelSize) throws(ImageCodingError) -> Image? {
        let session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: false)
        do {
            guard try session.feed(stream), let image = session.makeImage(scale: options.scale), image.size == size else {
                return nil
            }
            return image.pixelFormat == .rgba8 ? image : try image.converted(to: .rgba8)
        } catch .insufficientMemory(let count) {
            throw .insufficientMemory(byteCount: count)
        } catch {
            return nil
        }
    }

    /// Draws `frame` (RGBA) at `rect` of the canvas: replacing, or composing over with straight alpha.
    static func compose(_ frame: Image, onto canvas: UnsafeMutablePointer<UInt8>, canvasRowBytes: Int,
                        at rect: PixelRect, over: Bool) {
        frame.withUnsafePixels { pixels in
            let source = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for row in 0..<rect.height {
                let from = source + row * frame.bytesPerRow
                let to = canvas + (rect.y + row) * canvasRowBytes + rect.x * 4
                guard over else {
                    to.update(from: from, count: rect.width * 4)
                    continue
                }
                for column in 0..<rect.width {
                    let s = from + column * 4, d = to + column * 4
                    let alpha = Int(s[3])
                    if alpha == 255 || (alpha != 0 && d[3] == 0) {
                        d.update(from: s, count: 4)
                    } else if alpha != 0 {
                        let u = alpha * 255, v = (255 - alpha) * Int(d[3]), total = u + v
                        for channel in 0..<3 {
                            d[channel] = UInt8((Int(s[channel]) * u + Int(d[channel]) * v) / total)
                        }
                        d[3] = UInt8(total / 255)
                    }
                }
            }
        }
    }
}
