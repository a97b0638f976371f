import CColor
import CJPEG

/// One JPEG decode in progress: the Swift side of the `CJPEG` state machine, shared by
/// ``JPEGCoder/decode(_:options:)`` (all bytes at once) and ``JPEGIncrementalDecoder`` (bytes as
/// they arrive), so that both produce the same pixels by construction.
///
/// When libjpeg has read the header, ``configure()`` checks the pixel limit, reads the EXIF
/// orientation, computes the output size (against the displayed size when orientation will swap
/// the sides), picks libjpeg's DCT scaling (the smallest 1/8, 1/4 or 1/2 whose output still covers
/// the target), and allocates the buffer libjpeg decodes straight into. The finished image is that
/// buffer, resampled to the exact target size when it differs, then turned upright if asked.
///
/// Not thread-safe: one thread at a time (the C decoder is single-threaded).
final class JPEGDecompressor {
    /// More scans than this fail as corrupt: real progressive files have a dozen or so, while a
    /// hostile one can make libjpeg redo its work per scan tens of thousands of times.
    static let maxScans: Int32 = 1000

    /// The buffer and geometry chosen once the header is known.
    private struct Layout {
        /// Receives libjpeg's output; wrapped in the final image once decoding is done.
        let storage: PixelStorage
        /// libjpeg's output size, after DCT scaling.
        let decodedSize: PixelSize
        /// The final size before orientation is applied.
        let targetSize: PixelSize
        let pixelFormat: PixelFormat
        let bytesPerRow: Int
        let orientation: ImageOrientation
    }

    let options: DecodeOptions
    /// libjpeg's working-memory cap in bytes (coefficient buffers of multi-scan files dominate).
    let maxMemory: Int
    private let handle: OpaquePointer
    private var layout: Layout?
    /// The CMYK profile's transform the C decoder converts rows with (set by `configure`, kept while it may be called).
    private var cmykTransform: SRGBConverter.Transform?
    private var finalImage: Image?
    /// The first error; once set, every later call reports it.
    private(set) var failure: ImageCodingError?

    /// Creates a decoder for one file.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` if the C decoder cannot be allocated.
    init(options: DecodeOptions) throws(ImageCodingError) {
        self.options = options
        // Coefficients take 2 bytes per sample: up to 8 bytes per pixel (4:4:4:4 CMYK), plus tables.
        let (coefficients, overflow) = max(options.pixelCountLimit, 0).multipliedReportingOverflow(by: 8)
        let (total, overflowAgain) = coefficients.addingReportingOverflow(64 << 20)
        maxMemory = overflow || overflowAgain ? Int.max : total
        guard let handle = cjpeg_decoder_create(maxMemory, Self.maxScans) else {
            throw .insufficientMemory(byteCount: 64 << 10) // the decoder's own state, roughly
        }
        self.handle = handle
    }

    deinit {
        cjpeg_decoder_destroy(handle)
    }

    /// Uses `bytes` as the complete file without copying. They must stay valid while this
    /// decoder is used; call before any ``append(_:)``.
    func useCompleteInput(_ bytes: UnsafeRawBufferPointer) {
        cjpeg_decoder_use_complete_input(handle, bytes.baseAddress, bytes.count)
    }

    /// Appends a copy of `bytes` to the input and decodes as far as possible.
    /// - Throws: ``ImageCodingError`` for corrupt data, a too-large header, or memory exhaustion.
    func append(_ bytes: UnsafeRawBufferPointer) throws(ImageCodingError) {
        if let failure { throw failure }
        guard cjpeg_decoder_append(handle, bytes.baseAddress, bytes.count) == 0 else {
            throw record(libraryError())
        }
        try advance()
    }

    /// How many warnings libjpeg has raised so far (corrupt data it recovered from, extra bytes...).
    var warningCount: Int { cjpeg_decoder_warning_count(handle) }

    /// Ends the input: from now on, running out of bytes is truncation.
    func endInput() {
        cjpeg_decoder_end_input(handle)
    }

    /// Decodes as far as the bytes so far allow.
    /// - Throws: ``ImageCodingError``: `truncatedData` when the input has ended before the image,
    ///   `corruptData`, `imageTooLarge`, `insufficientMemory`.
    func advance() throws(ImageCodingError) {
        if let failure { throw failure }
        while true {
            let status = cjpeg_decoder_process(handle)
            if status == CJPEG_HEADER_READY {
                do throws(ImageCodingError) {
                    try configure()
                } catch {
                    throw record(error)
                }
            } else if status == CJPEG_DONE {
                return
            } else if status == CJPEG_NEED_MORE_DATA {
                if cjpeg_decoder_input_ended(handle) != 0 { throw record(.truncatedData(format: .jpeg)) }
                return
            } else {
                throw record(libraryError())
            }
        }
    }

    /// The complete image. Call once ``advance()`` has finished the decode.
    /// - Throws: the decode's error, or ``ImageCodingError/truncatedData(format:)`` if it is not done.
    func makeImage() throws(ImageCodingError) -> Image {
        if let failure { throw failure }
        if let finalImage { return finalImage }
        guard let layout, progress.done != 0 else { throw record(.truncatedData(format: .jpeg)) }
        // libjpeg fills a data segment that ends early with grey and only warns: never hand that out
        // as a complete image (a cut file with an end marker appended looks whole otherwise).
        if cjpeg_decoder_data_missing(handle) != 0 { throw record(.truncatedData(format: .jpeg)) }
        do throws(ImageCodingError) {
            let image = try finish(decoded: layout.storage, layout)
            finalImage = image
            return image
        } catch {
            throw record(error)
        }
    }

    /// The image as far as it is decoded, at the final size and orientation: rows decoded so far
    /// (the rest zero) for single-scan files, the latest complete scan for multi-scan ones; `nil`
    /// before any pixel exists or after an error.
    func makePartialImage() -> Image? {
        if failure != nil { return nil }
        if let finalImage { return finalImage }
        guard let layout else { return nil }
        let state = progress
        if state.done != 0 { return try? makeImage() }
        let byteCount = layout.bytesPerRow * layout.decodedSize.height
        if state.is_multiscan != 0 {
            guard state.renderable_scan > 0, let storage = try? PixelStorage(byteCount: byteCount) else { return nil }
            let rendered = cjpeg_decoder_render_scan(handle, storage.bytes.assumingMemoryBound(to: UInt8.self), layout.bytesPerRow)
            if rendered < 0 { record(libraryError()) }
            guard rendered == 0 else { return nil }
            return try? finish(decoded: storage, layout)
        }
        let decodedBytes = Int(state.rows) * layout.bytesPerRow
        guard decodedBytes > 0, let storage = try? PixelStorage(byteCount: byteCount) else { return nil }
        storage.bytes.copyMemory(from: layout.storage.bytes, byteCount: decodedBytes)
        // Pooled buffers may hold another image's pixels: rows not decoded yet must be zero.
        (storage.bytes + decodedBytes).initializeMemory(as: UInt8.self, repeating: 0, count: byteCount - decodedBytes)
        return try? finish(decoded: storage, layout)
    }

    // MARK: - Internals

    private var progress: cjpeg_progress {
        var progress = cjpeg_progress()
        cjpeg_decoder_get_progress(handle, &progress)
        return progress
    }

    @discardableResult
    private func record(_ error: ImageCodingError) -> ImageCodingError {
        if failure == nil { failure = error }
        return failure ?? error
    }

    /// The error the C decoder is in, as an ``ImageCodingError``.
    private func libraryError() -> ImageCodingError {
        let message = String(cString: cjpeg_decoder_error_message(handle))
        switch cjpeg_decoder_error_kind(handle) {
        case CJPEG_ERROR_OUT_OF_MEMORY:
            return .insufficientMemory(byteCount: maxMemory)
        case CJPEG_ERROR_TRUNCATED:
            return .truncatedData(format: .jpeg)
        case CJPEG_ERROR_UNSUPPORTED:
            // Valid JPEG this libjpeg build cannot decode, such as 12-bit precision.
            return .unsupportedFeature(format: .jpeg, reason: "libjpeg-turbo: \(message)")
        default:
            return .corruptData(format: .jpeg, reason: message.isEmpty ? "libjpeg failed" : message)
        }
    }

    /// Chooses scale, output format and buffer once the header is read.
    private func configure() throws(ImageCodingError) {
        var header = cjpeg_header()
        guard cjpeg_decoder_get_header(handle, &header) == 0 else { throw libraryError() }
        let stored = PixelSize(width: Int(header.width), height: Int(header.height))
        guard stored.pixelCount <= options.pixelCountLimit else {
            throw .imageTooLarge(width: stored.width, height: stored.height, limit: options.pixelCountLimit)
        }
        var inputCount = 0
        let orientation: ImageOrientation = cjpeg_decoder_input(handle, &inputCount).map {
            EXIFOrientationReader.orientation(inJPEG: UnsafeRawBufferPointer(start: $0, count: inputCount))
        } ?? .up

        // The output size is computed on the displayed image when orientation will be applied.
        let turns = options.applyOrientation && orientation.swapsDimensions
        let displayed = turns ? stored.transposed : stored
        let target = turns ? options.outputSize(forSource: displayed).transposed : options.outputSize(forSource: displayed)

        if header.is_cmyk != 0 && options.convertsToSRGB, let input = cjpeg_decoder_input(handle, &inputCount),
           let profile = ICCProfileReader.jpegProfile(in: UnsafeBufferPointer(start: input, count: inputCount)),
           let transform = SRGBConverter.cmykTransform(for: profile) {
            cmykTransform = transform   // kept alive with the decoder, which calls it
            cjpeg_decoder_set_cmyk_converter(handle, ccolor_convert_cmyk, UnsafeMutableRawPointer(transform.handle))
        }

        var output = cjpeg_output()
        guard cjpeg_decoder_configure(handle, Self.scaleDenominator(source: stored, target: target), &output) == 0 else {
            throw libraryError()
        }
        let decoded = PixelSize(width: Int(output.width), height: Int(output.height))
        let pixelFormat: PixelFormat = output.pixels == CJPEG_PIXELS_GRAY ? .gray8 : .rgb8
        let bytesPerRow = decoded.width * pixelFormat.bytesPerPixel
        let storage = try PixelStorage(byteCount: bytesPerRow * decoded.height)
        guard cjpeg_decoder_set_output(handle, storage.bytes.assumingMemoryBound(to: UInt8.self), bytesPerRow) == 0 else {
            throw libraryError()
        }
        layout = Layout(storage: storage, decodedSize: decoded, targetSize: target, pixelFormat: pixelFormat,
                        bytesPerRow: bytesPerRow, orientation: orientation)
    }

    /// Wraps decoded pixels as an image, resamples to the target size and applies orientation.
    private func finish(decoded storage: PixelStorage, _ layout: Layout) throws(ImageCodingError) -> Image {
        var image = Image(storage: storage, width: layout.decodedSize.width, height: layout.decodedSize.height,
                          pixelFormat: layout.pixelFormat, bytesPerRow: layout.bytesPerRow, format: .jpeg,
                          scale: options.scale, orientation: layout.orientation)
        if image.size != layout.targetSize {
            image = try Resampler.resample(image, to: layout.targetSize)
        }
        if options.applyOrientation {
            image = try image.oriented()
        }
        return image
    }

    /// The largest DCT scaling denominator (8, 4, 2, else 1) whose output, `⌈side / d⌉` as libjpeg
    /// computes it, still covers `target` in both dimensions.
    static func scaleDenominator(source: PixelSize, target: PixelSize) -> UInt32 {
        for denominator in [8, 4, 2] {
            let width = (source.width + denominator - 1) / denominator
            let height = (source.height + denominator - 1) / denominator
            if width >= target.width && height >= target.height { return UInt32(denominator) }
        }
        return 1
    }
}

extension PixelSize {
    /// The size with width and height swapped.
    fileprivate var transposed: PixelSize { PixelSize(width: height, height: width) }
}
