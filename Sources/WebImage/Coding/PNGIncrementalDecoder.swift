import Foundation

/// The ``IncrementalDecoder`` of ``PNGCoder``: feeds bytes to a ``PNGDecodeSession`` as they arrive.
///
/// Image data (`IDAT`) is decoded as soon as it arrives. Other chunks are held back (by
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
    /// Bytes received but not yet handed to the session; `pending[0]` is byte `pendingOffset` of the file.
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private var failure: ImageCodingError?
    private var finalImage: Image?
    private(set) var receivedByteCount = 0

    init(options: DecodeOptions) {
        self.options = options
    }

    func append(_ chunk: Data) throws {
        if let failure { throw failure }
        receivedByteCount += chunk.count
        if finalImage != nil || session?.isComplete == true { return }
        pending.append(contentsOf: chunk)
        let limit = pending.withUnsafeBytes { scheduler.feedLimit(received: $0, startingAt: pendingOffset) }
        try feedPending(upTo: limit)
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
        do throws(ImageCodingError) {
            // Nothing more is coming: hand over whatever was held back.
            try feedPending(upTo: pendingOffset + pending.count)
            guard let session, let image = session.makeImage(scale: options.scale) else {
                throw .truncatedData(format: .png)
            }
            let result = try PNGCoder.fitted(image, options: options)
            finalImage = result
            return result
        } catch {
            failure = error
            throw error
        }
    }

    /// Hands the pending bytes before file offset `limit` to the session.
    private func feedPending(upTo limit: Int) throws(ImageCodingError) {
        let count = min(limit - pendingOffset, pending.count)
        guard count > 0 else { return }
        do throws(ImageCodingError) {
            let session: PNGDecodeSession
            if let existing = self.session {
                session = existing
            } else {
                session = try PNGDecodeSession(pixelCountLimit: options.pixelCountLimit, zeroFillsOutput: true)
                self.session = session
            }
            let fed = pending.withUnsafeBytes { bytes in
                Result { () throws(ImageCodingError) in
                    try session.feed(UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                }
            }
            _ = try fed.get()
        } catch {
            failure = error
            throw error
        }
        pending.removeFirst(count)
        pendingOffset += count
    }
}
