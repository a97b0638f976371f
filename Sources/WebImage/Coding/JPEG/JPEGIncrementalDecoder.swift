import Foundation

/// The ``IncrementalDecoder`` that ``JPEGCoder/makeIncrementalDecoder(options:)`` returns.
///
/// Runs the same ``JPEGDecompressor`` as a full decode over a suspending libjpeg source, so the
/// final image equals ``JPEGCoder/decode(_:options:)`` of the same bytes, byte for byte, with the
/// same thumbnail size and orientation. Baseline files show the rows decoded so far; progressive
/// (and other multi-scan) files are decoded in libjpeg's buffered-image mode and show the latest
/// complete scan, rendered only when ``makePartialImage()`` is called.
///
/// On corrupt entropy data libjpeg's suspending path can recover differently from a decode of the
/// whole buffer (found by fuzzing: rows of one MCU band differed). So the decoder keeps the bytes it
/// was given (the file's size, small next to its pixels), and when libjpeg warned during the
/// decode, ``finish()`` decodes them again in one piece: the final image is then still the full
/// decode's, byte for byte.
///
/// Not thread-safe: use from one task at a time.
final class JPEGIncrementalDecoder: IncrementalDecoder {
    /// `nil` only if the C decoder could not be allocated; it keeps its own first error (sticky).
    private let decompressor: JPEGDecompressor?
    private let options: DecodeOptions
    private var received = Data()
    private(set) var receivedByteCount = 0

    init(options: DecodeOptions) {
        self.options = options
        decompressor = try? JPEGDecompressor(options: options)
    }

    func append(_ chunk: Data) throws {
        receivedByteCount += chunk.count
        received.append(chunk)
        let decompressor = try ready()
        try chunk.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            try decompressor.append(bytes)
        }
    }

    func makePartialImage() -> Image? {
        decompressor?.makePartialImage()
    }

    func finish() throws -> Image {
        let decompressor = try ready()
        decompressor.endInput()
        try decompressor.advance()
        let image = try decompressor.makeImage()
        if decompressor.warningCount > 0 { return try JPEGCoder().decode(received, options: options) }
        return image
    }

    private func ready() throws(ImageCodingError) -> JPEGDecompressor {
        guard let decompressor else { throw ImageCodingError.insufficientMemory(byteCount: 64 << 10) }
        return decompressor
    }
}
