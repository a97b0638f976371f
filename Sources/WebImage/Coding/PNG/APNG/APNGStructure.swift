/// The animation an APNG file describes, read from its chunks without decompressing anything.
///
/// What counts as an animation follows browsers and the corpus reference (apngdis; FFmpeg agrees):
/// exactly one `acTL`, before the first `IDAT`, declaring at least one frame; every `fcTL` starts a
/// frame whose data is the `IDAT` chunks (when it comes before them: the default image is the first
/// frame) or the `fdAT` chunks after it. Sequence numbers are not checked (apngdis and FFmpeg ignore
/// them; Pillow refuses files whose numbers skip or repeat). Anything else broken (no `acTL`, two of
/// them, one after `IDAT`, a frame without data, a frame outside the canvas, an unknown dispose or
/// blend operation) makes ``parse(_:)`` return `nil`, and the file decodes as its still image, as
/// browsers show it.
struct APNGStructure {
    /// One `fcTL` chunk's fields.
    struct FrameControl: Equatable {
        var rect: PixelRect
        /// The delay, `numerator / denominator` seconds (a zero denominator means 100).
        var delayNumerator: Int
        var delayDenominator: Int
        /// 0 none, 1 clear to transparent, 2 restore the canvas before the frame.
        var disposeOp: UInt8
        /// 0 source (replace), 1 over (alpha-composite).
        var blendOp: UInt8

        /// The delay as a duration, in whole milliseconds rounded down, as apngdis reports it.
        var delay: Duration {
            let denominator = delayDenominator == 0 ? 100 : delayDenominator
            return .milliseconds(delayNumerator * 1000 / denominator)
        }
    }

    /// One frame: its control and where its compressed data lies in the file.
    struct Frame {
        var control: FrameControl
        /// The zlib data: payloads of `IDAT` chunks, or of `fdAT` chunks after their sequence number.
        var dataRanges: [Range<Int>] = []
    }

    /// The canvas (the `IHDR` size).
    let canvas: PixelSize
    /// The `IHDR` payload (13 bytes); frames reuse it with their own size.
    let header: Range<Int>
    /// Whole `PLTE` and `tRNS` chunks (length, type, data, CRC) before the first `IDAT`, which every
    /// frame's stream repeats.
    let sharedChunks: [Range<Int>]
    /// `acTL`'s `num_plays`: 0 forever.
    let loopCount: Int
    /// Whether the default (`IDAT`) image is the first frame; when not, it is a still image that
    /// animation-aware viewers skip.
    let defaultImageIsFrame: Bool
    /// The animation's frames, in file order.
    let frames: [Frame]

    /// The animation of the PNG file `png`, or `nil` when it has none or a broken one.
    static func parse(_ png: UnsafeRawBufferPointer) -> APNGStructure? {
        var parser = Parser(png: png)
        return parser.run()
    }

    private struct Parser {
        let png: UnsafeRawBufferPointer
        var header: Range<Int>?
        var shared: [Range<Int>] = []
        var actlCount = 0
        var loopCount = 0
        var declaredFrames = 0
        var sawIDAT = false
        var defaultImageIsFrame = false
        var frames: [Frame] = []
        var currentTakesIDAT = false
        var sawIEND = false

        init(png: UnsafeRawBufferPointer) {
            self.png = png
        }

        func integer(at offset: Int, bytes: Int) -> Int {
            (0..<bytes).reduce(0) { $0 << 8 | Int(png[offset + $1]) }
        }

        mutating func run() -> APNGStructure? {
            var offset = 8
            walk: while offset + 12 <= png.count {
                let length = integer(at: offset, bytes: 4)
                let start = offset + 8
                guard length < Int(Int32.max), start + length + 4 <= png.count else { return nil }
                let payload = start..<(start + length)
                let type = (png[offset + 4], png[offset + 5], png[offset + 6], png[offset + 7])
                switch type {
                case (0x49, 0x48, 0x44, 0x52):   // IHDR
                    guard length == 13 else { return nil }
                    header = payload
                case (0x50, 0x4C, 0x54, 0x45), (0x74, 0x52, 0x4E, 0x53):   // PLTE, tRNS
                    if !sawIDAT { shared.append(offset..<(payload.upperBound + 4)) }
                case (0x61, 0x63, 0x54, 0x4C):   // acTL
                    guard !sawIDAT, length == 8 else { return nil }
                    actlCount += 1
                    declaredFrames = integer(at: start, bytes: 4)
                    loopCount = integer(at: start + 4, bytes: 4)
                case (0x66, 0x63, 0x54, 0x4C):   // fcTL
                    guard length == 26, let control = frameControl(at: start) else { return nil }
                    if !sawIDAT && frames.isEmpty { defaultImageIsFrame = true }
                    currentTakesIDAT = !sawIDAT
                    frames.append(Frame(control: control))
                case (0x49, 0x44, 0x41, 0x54):   // IDAT
                    sawIDAT = true
                    if currentTakesIDAT, !frames.isEmpty { frames[frames.count - 1].dataRanges.append(payload) }
                case (0x66, 0x64, 0x41, 0x54):   // fdAT
                    guard length >= 4, sawIDAT, !frames.isEmpty, !currentTakesIDAT else { return nil }
                    frames[frames.count - 1].dataRanges.append((start + 4)..<payload.upperBound)
                case (0x49, 0x45, 0x4E, 0x44):   // IEND
                    sawIEND = true
                    break walk
                default:
                    break
                }
                if type != (0x49, 0x44, 0x41, 0x54) && sawIDAT { currentTakesIDAT = false }
                offset = payload.upperBound + 4
            }
            return finished()
        }

        func frameControl(at start: Int) -> FrameControl? {
            let width = integer(at: start + 4, bytes: 4), height = integer(at: start + 8, bytes: 4)
            let x = integer(at: start + 12, bytes: 4), y = integer(at: start + 16, bytes: 4)
            let dispose = png[start + 24], blend = png[start + 25]
            guard width > 0, height > 0, dispose <= 2, blend <= 1 else { return nil }
            return FrameControl(rect: PixelRect(x: x, y: y, width: width, height: height),
                                delayNumerator: integer(at: start + 20, bytes: 2),
                                delayDenominator: integer(at: start + 22, bytes: 2),
                                disposeOp: dispose, blendOp: blend)
        }

        func finished() -> APNGStructure? {
            // A file cut short decodes (and fails) as a still image: the still decode says it is truncated.
            guard let header, sawIEND, actlCount == 1, declaredFrames > 0, !frames.isEmpty, sawIDAT else { return nil }
            let canvas = PixelSize(width: integer(at: header.lowerBound, bytes: 4),
                                   height: integer(at: header.lowerBound + 4, bytes: 4))
            for (index, frame) in frames.enumerated() {
                let rect = frame.control.rect
                guard !frame.dataRanges.isEmpty,
                      rect.x + rect.width <= canvas.width, rect.y + rect.height <= canvas.height else { return nil }
                if index == 0 && defaultImageIsFrame && rect != PixelRect(x: 0, y: 0, width: canvas.width, height: canvas.height) {
                    return nil
                }
            }
            return APNGStructure(canvas: canvas, header: header, sharedChunks: shared, loopCount: loopCount,
                                 defaultImageIsFrame: defaultImageIsFrame, frames: frames)
        }
    }

    /// A PNG file of frame `index` alone: `IHDR` with the frame's size, the shared chunks, its data as
    /// `IDAT`, `IEND` (every chunk with its CRC), which libpng decodes as any still PNG.
    func stream(ofFrame index: Int, in png: UnsafeRawBufferPointer) -> [UInt8] {
        let frame = frames[index]
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out.reserveCapacity(64 + frame.dataRanges.reduce(0) { $0 + $1.count + 12 })
        var ihdr = Array(png[header])
        for (offset, value) in [(0, frame.control.rect.width), (4, frame.control.rect.height)] {
            for byte in 0..<4 { ihdr[offset + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * byte)) }
        }
        Self.appendChunk("IHDR", ihdr[...], to: &out)
        for chunk in sharedChunks { out.append(contentsOf: png[chunk]) }
        for range in frame.dataRanges { Self.appendChunk("IDAT", png[range], to: &out) }
        Self.appendChunk("IEND", [][...], to: &out)
        return out
    }

    /// Appends a chunk (length, type, `payload`, CRC) to `out`.
    static func appendChunk<Payload: Collection<UInt8>>(_ type: String, _ payload: Payload, to out: inout [UInt8]) {
        let count = UInt32(payload.count)
        out.append(contentsOf: withUnsafeBytes(of: count.bigEndian) { Array($0) })
        let start = out.count
        out.append(contentsOf: type.utf8)
        out.append(contentsOf: payload)
        let crc = out.withUnsafeBytes { CRC32.update(0, UnsafeRawBufferPointer(rebasing: $0[start...])) }
        out.append(contentsOf: withUnsafeBytes(of: crc.bigEndian) { Array($0) })
    }
}
