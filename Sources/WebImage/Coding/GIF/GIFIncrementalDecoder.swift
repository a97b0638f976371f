import CGIF
import Foundation

/// The ``IncrementalDecoder`` of ``GIFCoder``: frames are composited as their bytes complete (a block
/// walk that resumes where it stopped tells which are, so bytes trickling in one at a time cost linear
/// time, as fuzz-gif found they did not when each append walked the whole file), so a partial image is the latest whole frame, as a browser shows a GIF that
/// is still arriving.
///
/// ``finish()`` checks the whole file as the full decode does (canvas, frame count, budget), reads the
/// remaining frames with the same reader and assembles them the same way, so it equals
/// ``GIFCoder/decode(_:options:)`` of the same bytes; when the frames read so far went wrong, the full
/// decode decides the outcome (and its error). Frames past the budget are never read early.
///
/// Not thread-safe: use it from one task at a time. Failures are sticky.
final class GIFIncrementalDecoder: IncrementalDecoder {
    private let options: DecodeOptions
    private var received: [UInt8] = []
    private var reader: GIFFrameReader?
    /// The block walk so far: each append walks only the new bytes.
    private var scan = CGIFScanState()
    /// Whether reading as bytes arrive can go on (else ``finish()`` decodes the file whole).
    private var isHealthy = true
    private var failure: ImageCodingError?
    private var finalImage: Image?
    private(set) var receivedByteCount = 0

    init(options: DecodeOptions) {
        self.options = options
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        receivedByteCount += chunk.count
        guard finalImage == nil else { return }
        received.append(contentsOf: chunk)
        guard isHealthy else { return }
        let outcome = received.withUnsafeBytes { bytes in
            Result { () throws(ImageCodingError) in try readCompleteFrames(bytes) }
        }
        if case .failure(let error) = outcome {
            failure = error
            throw error
        }
    }

    /// Composites every frame whose bytes are complete and that the budget allows.
    private func readCompleteFrames(_ bytes: UnsafeRawBufferPointer) throws(ImageCodingError) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        switch cgif_scan_more(base, bytes.count, &scan) {
        case .truncated: return
        case .notGIF:
            isHealthy = false
            return
        case .OK: break
        }
        let info = scan.info
        let canvas = PixelSize(width: Int(info.canvas_width), height: Int(info.canvas_height))
        if reader == nil {
            guard canvas.width > 0, canvas.height > 0 else {
                isHealthy = false
                return
            }
            try GIFDecoding.checkCanvas(canvas, options: options)   // the full decode's first error, if any
            do {
                reader = try GIFFrameReader(bytes: bytes, canvas: canvas, options: options)
            } catch {
                isHealthy = false
                return
            }
        }
        guard let reader else { return }
        let limit = min(options.decodedFrameCount(of: Int.max), options.maxFrameCount, options.maxAnimationByteCount / max(canvas.pixelCount * 4, 1))
        while reader.frames.count < min(Int(info.complete_frame_count), limit) {
            do {
                guard try reader.readFrame(from: bytes) else { return }
            } catch {
                isHealthy = false
                return
            }
        }
    }

    func makePartialImage() -> Image? {
        finalImage ?? reader?.frames.last?.image
    }

    func finish() throws -> Image {
        if let failure { throw failure }
        if let finalImage { return finalImage }
        let outcome = received.withUnsafeBytes { bytes in
            Result { () throws(ImageCodingError) -> Image in
                let decoding = GIFDecoding(bytes: bytes, options: options)
                guard isHealthy, let reader else { return try decoding.decode() }
                let info = try decoding.checkedInfo()
                do {
                    return try reader.finish(from: bytes, info: info)
                } catch {
                    return try decoding.decode()
                }
            }
        }
        switch outcome {
        case .success(let image):
            finalImage = image
            received = []
            return image
        case .failure(let error):
            failure = error
            throw error
        }
    }
}
