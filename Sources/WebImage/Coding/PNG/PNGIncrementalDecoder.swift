import Foundation

/// The ``IncrementalDecoder`` of ``PNGCoder``: feeds bytes to a ``PNGDecodeSession`` as they arrive.
///
/// Image data (`IDAT`) is decoded as soon as it arrives. An animated PNG shows its default image
/// while it arrives; ``finish()`` composites every frame, as ``PNGCoder/decode(_:options:)`` does. Other chunks are held back (by
/// ``PNGChunkScheduler``) until they are complete and then handed over in one piece: libpng's
/// progressive reader copies a partly received chunk into a new buffer on every call, which for a large
/// chunk arriving in small pieces would cost time quadratic in its size.
///
/// Not thread-safe: use it from one task at a time. Failures are sticky: after a throw every later
/// ``append(_:)`` and ``finish()`` throws the same error.
final class PNGIncrementalDecoder: IncrementalDecoder {
    private let options: DecodeOptions
    private var session: PNGDecodeSession?
    private var scheduler = PNGChunkScheduler()
    /// Every byte received, until the decode ends: the session is fed from it, a file that is not
    /// a PNG is judged by its first bytes, and a failed decode by all of them (see ``finish()``).
    private var received: [UInt8] = []
    /// How many bytes of `received` the session has been given.
    private var fedCount = 0
    private var failure: ImageCodingError?
    private var finalImage: Image?
    private(set) var receivedByteCount = 0
    /// Whether the first 8 bytes are PNG's signature (`nil` until 8 bytes are in, or a mismatch).
    private var hasSignature: Bool?
    /// Set when libpng failed on bytes a full decode does not decode either (see ``settle(_:)``):
    /// the rest is only collected, and ``finish()`` lets a full decode decide.
    private var awaitsFullDecode = false

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    /// How many bytes ``PNGCoder/decode(_:options:)`` sniffs (an SVG may show itself late).
    private static let sniffedByteCount = 1024

    init(options: DecodeOptions) {
        self.options = options
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        receivedByteCount += chunk.count
        if finalImage != nil || session?.isComplete == true { return }
        received.append(contentsOf: chunk)
        if awaitsFullDecode { return }
        if hasSignature != true {
            checkSignature()
            if hasSignature == false {
                // Not a PNG: this ends in an error, and which one can take up to 1 KB to tell.
                if received.count >= Self.sniffedByteCount { throw fail(with: notPNGError()) }
                return
            }
        }
        let limit = received.withUnsafeBytes { bytes in
            scheduler.feedLimit(received: UnsafeRawBufferPointer(rebasing: bytes[fedCount...]), startingAt: fedCount)
        }
        do throws(ImageCodingError) {
            try feed(upTo: limit)
        } catch {
            try settle(error)
        }
    }

    /// Decides a failure of libpng's progressive reader at ``append(_:)``. Its verdict on a damaged
    /// file can depend on how the bytes were split (fuzz-png: a row with a bad filter byte inflated
    /// from a few bytes at a time, where the same bytes at once just end early), and the full decode
    /// may judge the zlib data otherwise (libdeflate, see `PNGFastDecoder`), so the full decode
    /// decides: if it decodes the bytes so far, that image completes the decode; otherwise the rest is
    /// only collected, and ``finish()`` lets a full decode of every byte decide. A damaged file then
    /// fails at ``finish()`` rather than at the first bad byte; its pixel count was already checked.
    private func settle(_ error: ImageCodingError) throws(ImageCodingError) {
        guard case .corruptData = error else { throw fail(with: error) }
        failure = nil
        session = nil
        if let image = try? PNGCoder().decode(Data(received), options: options) {
            finalImage = image
            received = []
        } else {
            awaitsFullDecode = true
        }
    }

    func makePartialImage() -> Image? {
        if let finalImage { return finalImage }
        guard let session else { return nil }
        if session.isComplete { return try? finish() }
        guard let size = session.size else { return nil }
        let target = options.outputSize(forSource: size)
        if target != size { return session.makePartialImage(scale: options.scale, fittingTo: target) }
        return session.makePartialImage(scale: options.scale)
    }

    func finish() throws -> Image {
        if let failure { throw failure }
        if let finalImage { return finalImage }
        if hasSignature == false { throw fail(with: notPNGError()) }
        if awaitsFullDecode { return try decideByFullDecode() }
        do throws(ImageCodingError) {
            // Nothing more is coming: hand over whatever was held back.
            try feed(upTo: received.count)
            guard let session, let image = session.makeImage(scale: options.scale) else {
                throw .truncatedData(format: .png)
            }
            let orientation = received.withUnsafeBytes { PNGEXIFReader.orientation(inPNG: $0) }
            // An animated PNG's default image arrived as the partial images; its other frames are
            // decoded now, from the bytes kept, exactly as the full decode does.
            let finished = received.withUnsafeBytes { bytes in
                Result { () throws(ImageCodingError) in
                    try PNGCoder.finished(image, bytes: bytes, orientation: orientation, options: options)
                }
            }
            let result = try finished.get()
            finalImage = result
            received = []
            return result
        } catch {
            // libpng's progressive reader can end a damaged file differently depending on how its
            // bytes were split: with all of them at once, zlib may fail on bytes after the last row
            // (corrupt) that, fed in pieces, it never inflates (truncated). Found by fuzz-png. The
            // outcome must be the full decode's, so a failed decode is decided by one.
            return try decideByFullDecode()
        }
    }

    /// Ends the decode with a full decode of every byte received: its image, or its error (sticky).
    private func decideByFullDecode() throws -> Image {
        let bytes = received
        received = []
        do {
            let image = try PNGCoder().decode(Data(bytes), options: options)
            failure = nil
            finalImage = image
            return image
        } catch {
            throw fail(with: error as? ImageCodingError ?? .truncatedData(format: .png))
        }
    }

    /// Sets ``hasSignature`` once the first bytes match PNG's signature, or as soon as they do not.
    private func checkSignature() {
        let count = min(received.count, Self.signature.count)
        if !received.prefix(count).elementsEqual(Self.signature.prefix(count)) {
            hasSignature = false
        } else if count == Self.signature.count {
            hasSignature = true
        }
    }

    /// The error a full decode gives for a file that does not start with PNG's signature: another
    /// format's name when sniffing knows it, else libpng's own complaint.
    private func notPNGError() -> ImageCodingError {
        let head = received.prefix(Self.sniffedByteCount)
        let sniffed = ImageFormat(sniffing: Data(head))
        if sniffed != .png && sniffed != .unknown { return .unsupportedFormat(sniffed) }
        do throws(ImageCodingError) {
            let session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: false)
            let fed = head.withUnsafeBytes { bytes in
                Result { () throws(ImageCodingError) in try session.feed(bytes) }
            }
            _ = try fed.get()
            return .truncatedData(format: .png)
        } catch {
            return error
        }
    }

    private func fail(with error: ImageCodingError) -> ImageCodingError {
        failure = error
        return error
    }

    /// Hands the received bytes before file offset `limit` that the session has not had to it.
    private func feed(upTo limit: Int) throws(ImageCodingError) {
        let end = min(limit, received.count)
        guard end > fedCount else { return }
        do throws(ImageCodingError) {
            let session: PNGDecodeSession
            if let existing = self.session {
                session = existing
            } else {
                session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: true,
                                               keepsHighBitDepth: options.keepsHighBitDepth)
                self.session = session
            }
            let start = fedCount
            let fed = received.withUnsafeBytes { bytes in
                Result { () throws(ImageCodingError) in
                    try session.feed(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                }
            }
            _ = try fed.get()
        } catch {
            throw fail(with: error)
        }
        fedCount = end
    }
}
