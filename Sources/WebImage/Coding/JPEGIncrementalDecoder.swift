import Foundation

/// The ``IncrementalDecoder`` that ``JPEGCoder/makeIncrementalDecoder(options:)`` returns.
///
/// Runs the same ``JPEGDecompressor`` as a full decode over a suspending libjpeg source, so the
/// final image equals ``JPEGCoder/decode(_:options:)`` of the same bytes, byte for byte, with the
/// same thumbnail size and orientation. Baseline files show the rows decoded so far; progressive
/// (and other multi-scan) files are decoded in libjpeg's buffered-image mode and show the latest
/// complete scan, rendered only when ``makePartialImage()`` is called.
///
/// Not thread-safe: use from one task at a time.
final class JPEGIncrementalDecoder: IncrementalDecoder {
    /// `nil` only if the C decoder could not be allocated; it keeps its own first error (sticky).
    private let decompressor: JPEGDecompressor?
    private(set) var receivedByteCount = 0

    init(options: DecodeOptions) {
        decompressor = try? JPEGDecompressor(options: options)
    }

    func append(_ chunk: Data) throws {
        receivedByteCount += chunk.count
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
        return try decompressor.makeImage()
    }

    private func ready() throws(ImageCodingError) -> JPEGDecompressor {
        guard let decompressor else { throw ImageCodingError.insufficientMemory(byteCount: 64 << 10) }
        return decompressor
    }
}
