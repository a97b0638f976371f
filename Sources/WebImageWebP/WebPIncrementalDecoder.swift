import CWebP
import Foundation
import WebImage

/// The ``IncrementalDecoder`` of ``WebPCoder``: a still WebP decodes as its bytes arrive through
/// libwebp's `WebPIDecoder` (scaled on load as the full decode is), its partial images holding the
/// rows final so far; an animated WebP is kept whole and decoded by ``finish()`` (libwebp's animation
/// decoder needs the whole file).
///
/// ``finish()`` decodes the whole file as ``WebPCoder/decode(_:options:)`` does, so its image and its
/// errors are the full decode's, byte for byte (WebPIDecoder's result differs on damaged data, see
/// ``finish()``); the partial images are WebPIDecoder's.
///
/// Not thread-safe: use it from one task at a time. Failures are sticky.
final class WebPIncrementalDecoder: IncrementalDecoder {
    private enum State {
        /// Waiting for the headers.
        case header
        /// A still image decoding into `pixels` (`size`, `pixelFormat`, tightly packed rows).
        case still(decoder: OpaquePointer, pixels: UnsafeMutableRawPointer, size: PixelSize, pixelFormat: PixelFormat, complete: Bool)
        /// An animation, a file libwebp cannot start on, or one WebPIDecoder refused: every byte is
        /// kept for ``finish()``.
        case whole
    }

    private let options: DecodeOptions
    private var state = State.header
    private var received: [UInt8] = []
    private var failure: ImageCodingError?
    private var finalImage: Image?
    private(set) var receivedByteCount = 0

    init(options: DecodeOptions) {
        self.options = options
    }

    deinit {
        if case .still(let decoder, let pixels, _, _, _) = state {
            cwebp_incremental_destroy(decoder)
            free(pixels)
        }
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        receivedByteCount += chunk.count
        guard finalImage == nil else { return }
        received.append(contentsOf: chunk)
        switch state {
        case .header:
            try start()
        case .still(let decoder, _, _, _, let complete):
            guard !complete else { return }
            feed(decoder, chunk)
        case .whole:
            break
        }
    }

    /// Reads the headers once they are in; a still image starts decoding from every byte so far.
    private func start() throws(ImageCodingError) {
        var info = CWebPInfo()
        let status = cwebp_features(received, received.count, &info)
        if status == 7 { return }                               // VP8_STATUS_NOT_ENOUGH_DATA
        let size = PixelSize(width: Int(info.width), height: Int(info.height))
        guard status == 0, info.frame_count == 1, size.width > 0, size.height > 0 else {
            state = .whole                                      // finish() decodes it (or says why not)
            return
        }
        guard size.pixelCount <= options.pixelCountLimit else {
            // Nothing is allocated; the full decode in finish() gives the verdict (the headers of a
            // partial file can read differently from the whole one's, found by fuzz-webp).
            state = .whole
            return
        }
        // As the full decode: a lossless bitstream carries alpha even when the header's hint says none.
        let pixelFormat: PixelFormat = info.has_alpha != 0 || info.is_lossless != 0 ? .rgba8 : .rgb8
        let target = options.outputSize(forSource: size)
        let byteCount = target.pixelCount * pixelFormat.bytesPerPixel
        // calloc: zeroed pages the kernel maps only as rows are written, so a large declared image
        // whose bytes never come costs no resident memory.
        guard let pixels = calloc(byteCount, 1) else { throw fail(.insufficientMemory(byteCount: byteCount)) }
        guard let decoder = cwebp_incremental_create(
            Int32(size.width), Int32(size.height), Int32(pixelFormat.bytesPerPixel), Int32(target.width),
            Int32(target.height), pixels.assumingMemoryBound(to: UInt8.self), target.width * pixelFormat.bytesPerPixel) else {
            free(pixels)
            throw fail(.insufficientMemory(byteCount: byteCount))
        }
        state = .still(decoder: decoder, pixels: pixels, size: target, pixelFormat: pixelFormat, complete: false)
        feed(decoder, Data(received))
    }

    private func feed(_ decoder: OpaquePointer, _ bytes: Data) {
        let status = bytes.withUnsafeBytes { cwebp_incremental_append(decoder, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), $0.count) }
        switch status {
        case 0:
            if case .still(let decoder, let pixels, let size, let pixelFormat, _) = state {
                state = .still(decoder: decoder, pixels: pixels, size: size, pixelFormat: pixelFormat, complete: true)
            }
        case 5:
            break                                               // VP8_STATUS_SUSPENDED: more bytes wanted
        default:
            // WebPIDecoder can call data corrupt that the full decode calls truncated (found by
            // fuzz-webp): the decoding stops here and finish() lets the full decode give the verdict.
            if case .still(let decoder, let pixels, _, _, _) = state {
                cwebp_incremental_destroy(decoder)
                free(pixels)
            }
            state = .whole
        }
    }

    func makePartialImage() -> Image? {
        if let finalImage { return finalImage }
        guard case .still(let decoder, let pixels, let size, let pixelFormat, let complete) = state else { return nil }
        // Never finish() here: more bytes may still come (found by fuzz-webp: a partial image asked for
        // before the RIFF container's end made the decode call the file truncated for good).
        if complete { return try? copy(pixels, size: size, pixelFormat: pixelFormat) }
        let rows = min(Int(cwebp_incremental_rows(decoder)), size.height)
        guard rows > 0 else { return nil }
        return try? copy(pixels, size: size, pixelFormat: pixelFormat)
    }

    func finish() throws -> Image {
        if let failure { throw failure }
        if let finalImage { return finalImage }
        // The whole file, decoded by WebPDecode as the full decode does. WebPIDecoder's own result is
        // not used: on damaged lossy data the two write different garbage rows without an error, and
        // their verdicts on short or odd containers differ (all found by fuzz-webp); a progressive WebP
        // load costs one more decode, the price of finish() equalling decode(_:options:) byte for byte.
        let image: Image
        do {
            image = try WebPCoder().decode(Data(received), options: options)
        } catch {
            throw fail(error as? ImageCodingError ?? .truncatedData(format: .webp))
        }
        finalImage = image
        received = []
        return image
    }

    /// An image of the decode buffer's pixels (rows not yet decoded are zero).
    private func copy(_ pixels: UnsafeMutableRawPointer, size: PixelSize, pixelFormat: PixelFormat) throws -> Image {
        try Image(width: size.width, height: size.height, pixelFormat: pixelFormat, format: .webp, scale: options.scale) { out, bytesPerRow in
            let rowBytes = size.width * pixelFormat.bytesPerPixel
            for row in 0..<size.height {
                (out.baseAddress! + row * bytesPerRow).copyMemory(from: pixels + row * rowBytes, byteCount: rowBytes)
            }
        }
    }

    private func fail(_ error: ImageCodingError) -> ImageCodingError {
        failure = error
        return error
    }
}
