import Foundation

/// Decodes bytes of some formats into an ``Image`` and encodes images back into bytes.
///
/// Coders are registered with a ``CoderRegistry``; ``WebImageManager`` decodes every download
/// through one. Implementations are synchronous and CPU-bound: callers run them off actors.
public protocol ImageCoder: Sendable {
    /// Whether this coder can decode `data`, judged from its first bytes only (cheap).
    func canDecode(_ data: Data) -> Bool

    /// Decodes a complete image file.
    ///
    /// - Parameters:
    ///   - data: the whole file.
    ///   - options: size, limits and orientation; see ``DecodeOptions``.
    /// - Returns: the decoded image, in the smallest ``PixelFormat`` that holds it without loss.
    /// - Throws: ``ImageCodingError``: `corruptData`, `truncatedData` (never a partial image),
    ///   `imageTooLarge`, `unsupportedFormat`, `unsupportedFeature`, `insufficientMemory`.
    func decode(_ data: Data, options: DecodeOptions) throws -> Image

    /// Whether this coder can write images in `format`.
    func canEncode(_ format: ImageFormat) -> Bool

    /// Encodes `image` as a file in `format`.
    ///
    /// - Throws: ``ImageCodingError/unsupportedEncoding(format:pixelFormat:)`` or
    ///   ``ImageCodingError/encodingFailed(format:reason:)``.
    func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data
}

/// A coder that can also decode an image while its bytes are still arriving.
public protocol ProgressiveImageCoder: ImageCoder {
    /// Creates a decoder to feed one file's bytes as they arrive.
    /// - Parameter options: as for ``ImageCoder/decode(_:options:)``; every partial and the final
    ///   image honour them.
    func makeIncrementalDecoder(options: DecodeOptions) -> any IncrementalDecoder
}

/// Decodes one image from bytes that arrive in pieces (a download in progress).
///
/// Feed chunks with ``append(_:)``; ask for what has been decoded so far with
/// ``makePartialImage()``; call ``finish()`` once all bytes are in. The final image equals a full
/// ``ImageCoder/decode(_:options:)`` of the same bytes, byte for byte.
///
/// A decoder is not thread-safe: use it from one task at a time.
public protocol IncrementalDecoder: AnyObject {
    /// Adds the next bytes of the file and decodes as far as they allow.
    /// - Throws: ``ImageCodingError`` if the bytes so far are corrupt or declare too large an image;
    ///   after a throw the decoder is finished and every later call throws the same error.
    func append(_ chunk: Data) throws

    /// The full-size image as far as it is decoded: the rows received so far (the rest zero-filled)
    /// for sequential images, the latest complete scan for progressive JPEG. `nil` before any pixel
    /// is available. Each call makes a new image, costing a copy of the pixels: call it when you
    /// will show the result, not on every chunk.
    func makePartialImage() -> Image?

    /// The number of bytes appended so far.
    var receivedByteCount: Int { get }

    /// Ends the input and returns the complete image.
    /// - Throws: ``ImageCodingError/truncatedData(format:)`` if the bytes stop before the image
    ///   ends, or the error of an earlier ``append(_:)``.
    func finish() throws -> Image
}
