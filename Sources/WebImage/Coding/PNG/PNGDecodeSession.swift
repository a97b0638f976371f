import CPNG
import Foundation

/// One PNG decode in progress: libpng's progressive reader (through the CPNG shim) writing rows
/// straight into pooled ``PixelStorage``.
///
/// The same state machine serves a full decode (``PNGCoder/decode(_:options:)`` feeds every byte at
/// once) and an incremental one (``PNGIncrementalDecoder`` feeds bytes as they arrive): the shim pauses
/// libpng once the header is read, the session checks the pixel-count limit and allocates the pixels,
/// then decoding resumes into them. Every failure is sticky.
///
/// Not thread-safe: one owner uses it at a time. Its libpng state is freed when it is released,
/// whether or not decoding finished.
final class PNGDecodeSession {
    private let decoder: OpaquePointer
    private let pixelCountLimit: Int
    private let zeroFillsOutput: Bool
    private var storage: PixelStorage?
    private var header = CPNGHeader()
    private var failure: ImageCodingError?
    /// Whether `IEND` was read with every row written.
    private(set) var isComplete = false

    /// Creates a session that refuses images of more than `pixelCountLimit` pixels.
    /// - Parameter zeroFillsOutput: zero the pixels before decoding into them, so that an interlaced
    ///   image's partial state shows no stale memory (pooled buffers hold earlier images' pixels).
    ///   A full decode overwrites every byte and does not need it; non-interlaced rows arrive in
    ///   order, so ``makePartialImage(scale:)`` zeroes the missing ones itself.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` when libpng cannot start.
    /// - Parameter keepsHighBitDepth: a 16-bit file decodes to the 16-bit layouts
    ///   (``DecodeOptions/keepsHighBitDepth``) rather than to its samples' high bytes.
    init(pixelCountLimit: Int, zeroFillsOutput: Bool, keepsHighBitDepth: Bool = false) throws(ImageCodingError) {
        guard let decoder = cpng_decoder_create(UInt64(max(pixelCountLimit, 0))) else {
            throw .insufficientMemory(byteCount: 0)
        }
        if keepsHighBitDepth { cpng_decoder_keep_16(decoder) }
        self.decoder = decoder
        self.pixelCountLimit = pixelCountLimit
        self.zeroFillsOutput = zeroFillsOutput
    }

    deinit {
        cpng_decoder_destroy(decoder)
    }

    /// Decodes `bytes`, the next bytes of the file, as far as they go.
    /// - Returns: whether the image is complete (later bytes are then ignored).
    /// - Throws: ``ImageCodingError`` `imageTooLarge`, `corruptData` or `insufficientMemory`; the same
    ///   error again on every later call.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ImageCodingError) -> Bool {
        if let failure { throw failure }
        var remaining = bytes
        while true {
            var consumed = 0
            let status = cpng_decoder_feed(
                decoder, remaining.baseAddress?.assumingMemoryBound(to: UInt8.self), remaining.count, &consumed)
            switch status {
            case .needMore:
                return false
            case .complete:
                isComplete = true
                return true
            case .headerReady:
                do {
                    try prepareOutput()
                } catch {
                    failure = error
                    throw error
                }
                remaining = UnsafeRawBufferPointer(rebasing: remaining[consumed...])
            case .tooLarge:
                let declared = cpng_decoder_header(decoder)
                let error = ImageCodingError.imageTooLarge(
                    width: Int(declared.width), height: Int(declared.height), limit: pixelCountLimit)
                failure = error
                throw error
            case .failed:
                let error = ImageCodingError.corruptData(
                    format: .png, reason: String(cString: cpng_decoder_message(decoder)))
                failure = error
                throw error
            }
        }
    }

    /// The complete image, or `nil` before ``isComplete``.
    func makeImage(scale: Double) -> Image? {
        guard isComplete, let storage, let pixelFormat else { return nil }
        return Image(storage: storage, width: Int(header.width), height: Int(header.height),
                     pixelFormat: pixelFormat, bytesPerRow: header.rowBytes, format: .png, scale: scale)
    }

    /// A full-size copy of the pixels decoded so far, the rest zero; `nil` before the first row or if
    /// memory for the copy runs out.
    func makePartialImage(scale: Double) -> Image? {
        guard let storage, let pixelFormat, cpng_decoder_rows_delivered(decoder) > 0 else { return nil }
        let height = Int(header.height)
        let rowBytes = header.rowBytes
        let byteCount = rowBytes * height
        guard let copy = try? PixelStorage(byteCount: byteCount) else { return nil }
        // Interlaced output starts zeroed (zeroFillsOutput) and gains pixels all over the image;
        // non-interlaced output holds exactly the top `rowsDelivered` rows.
        let finalRows = header.interlaced != 0
            ? height
            : min(Int(clamping: cpng_decoder_rows_delivered(decoder)), height)
        copy.bytes.copyMemory(from: storage.bytes, byteCount: finalRows * rowBytes)
        (copy.bytes + finalRows * rowBytes).initializeMemory(as: UInt8.self, repeating: 0,
                                                             count: byteCount - finalRows * rowBytes)
        return Image(storage: copy, width: Int(header.width), height: height, pixelFormat: pixelFormat,
                     bytesPerRow: rowBytes, format: .png, scale: scale)
    }

    /// The pixels decoded so far fitted into `target` (a thumbnail size), the rest zero; `nil` before
    /// the first output row or if memory runs out.
    ///
    /// A non-interlaced image's rows arrive top first and never change again, so only the decoded
    /// band is resampled, read in place: the cost grows with the rows received, not with the whole
    /// canvas (resampling the whole mostly-empty canvas for every partial of a large image made
    /// fuzzing time out). An interlaced image gains pixels all over: it is copied and resampled whole.
    func makePartialImage(scale: Double, fittingTo target: PixelSize) -> Image? {
        guard let storage, let pixelFormat, cpng_decoder_rows_delivered(decoder) > 0 else { return nil }
        let height = Int(header.height)
        let rows = min(Int(clamping: cpng_decoder_rows_delivered(decoder)), height)
        guard header.interlaced == 0, rows < height else {
            return makePartialImage(scale: scale).flatMap { try? Resampler.resample($0, to: target) }
        }
        // The output rows the band fills, and the source rows that map onto exactly those.
        let outputRows = rows * target.height / height
        guard outputRows > 0 else { return nil }
        let bandHeight = min(rows, max(1, Int((Double(outputRows) * Double(height) / Double(target.height)).rounded())))
        let band = Image(storage: storage, width: Int(header.width), height: bandHeight, pixelFormat: pixelFormat,
                         bytesPerRow: header.rowBytes, format: .png, scale: scale)
        guard let resampled = try? Resampler.resample(band, to: PixelSize(width: target.width, height: outputRows)) else {
            return nil
        }
        let rowBytes = target.width * pixelFormat.bytesPerPixel
        let byteCount = rowBytes * target.height
        guard let canvas = try? PixelStorage(byteCount: byteCount) else { return nil }
        // Through withUnsafePixels, which keeps `resampled` alive during the copies: read from its
        // storage's pointer, the last row's copy could run after `resampled` was released (its last
        // use), its buffer already back in the pool, or unmapped.
        resampled.withUnsafePixels { source in
            for row in 0..<outputRows {
                (canvas.bytes + row * rowBytes).copyMemory(from: source.baseAddress! + row * resampled.bytesPerRow, byteCount: rowBytes)
            }
        }
        (canvas.bytes + outputRows * rowBytes).initializeMemory(as: UInt8.self, repeating: 0,
                                                                count: byteCount - outputRows * rowBytes)
        return Image(storage: canvas, width: target.width, height: target.height, pixelFormat: pixelFormat,
                     bytesPerRow: rowBytes, format: .png, scale: scale)
    }

    /// The image's size once its header is read (`nil` before).
    var size: PixelSize? {
        storage == nil ? nil : PixelSize(width: Int(header.width), height: Int(header.height))
    }

    private var pixelFormat: PixelFormat? {
        guard (1...4).contains(header.channels) else { return nil }
        return .layout(color: header.channels >= 3, alpha: header.channels % 2 == 0, highBitDepth: header.bitDepth == 16)
    }

    /// Allocates the pixels for the header just read and hands them to libpng.
    private func prepareOutput() throws(ImageCodingError) {
        header = cpng_decoder_header(decoder)
        let (byteCount, overflow) = header.rowBytes.multipliedReportingOverflow(by: Int(header.height))
        guard !overflow else {
            throw .imageTooLarge(width: Int(header.width), height: Int(header.height), limit: pixelCountLimit)
        }
        let storage = try PixelStorage(byteCount: byteCount)
        if zeroFillsOutput && header.interlaced != 0 {
            storage.bytes.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
        }
        cpng_decoder_set_output(decoder, storage.bytes.assumingMemoryBound(to: UInt8.self), header.rowBytes)
        self.storage = storage
    }
}
