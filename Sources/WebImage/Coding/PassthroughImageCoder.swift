import Foundation

/// A coder whose format is sent to clients as its source document rather than encoded from
/// pixels: an SVG answered as SVG is its source, sanitised, never a re-encode (no library writes
/// vector art from pixels). A variant asked for in such a format, or one that lets a vector source
/// pass (``EncodeOptions/passesVectorSource``), is this coder's ``passthroughDocument(_:)``.
public protocol PassthroughImageCoder: ImageCoder {
    /// The formats whose sources this coder passes through (``ImageFormat/svg`` for an SVG coder).
    var passthroughFormats: Set<ImageFormat> { get }

    /// The bytes a client is sent for the source `data` in its own format: the document as this
    /// coder makes it safe to serve (an SVG with its scripts and external references removed), or
    /// `data` itself when the coder is configured to leave it as it is.
    /// - Throws: ``ImageCodingError`` when `data` cannot be made safe (not this format, malformed,
    ///   or hostile past repair).
    func passthroughDocument(_ data: Data) throws -> Data
}

extension CoderRegistry {
    /// Whether a registered coder passes sources of `format` through (``PassthroughImageCoder``).
    public func canPassThrough(_ format: ImageFormat) -> Bool {
        passthroughCoder(for: format) != nil
    }

    /// The bytes to send a client for the source `data` in its own format, from the newest
    /// ``PassthroughImageCoder`` that passes its sniffed format; `nil` when none does.
    /// - Throws: what that coder's ``PassthroughImageCoder/passthroughDocument(_:)`` throws.
    public func passthroughDocument(for data: Data) throws -> Data? {
        guard let coder = passthroughCoder(for: ImageFormat(sniffing: data)) else { return nil }
        return try WorkSection.run { () throws -> Data in try coder.passthroughDocument(data) }
    }

    private func passthroughCoder(for format: ImageFormat) -> (any PassthroughImageCoder)? {
        guard format != .unknown else { return nil }
        return coders.last { ($0 as? any PassthroughImageCoder)?.passthroughFormats.contains(format) == true } as? any PassthroughImageCoder
    }
}
