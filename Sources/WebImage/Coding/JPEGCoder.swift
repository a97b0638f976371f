import Foundation

/// PLACEHOLDER (being written): decodes and encodes JPEG.
public struct JPEGCoder: ImageCoder {
    /// Creates the coder.
    public init() {}
    /// Placeholder.
    public func canDecode(_ data: Data) -> Bool { ImageFormat(sniffing: data) == .jpeg }
    /// Placeholder.
    public func decode(_ data: Data, options: DecodeOptions) throws -> Image { throw ImageCodingError.unsupportedFormat(.unknown) }
    /// Placeholder.
    public func canEncode(_ format: ImageFormat) -> Bool { false }
    /// Placeholder.
    public func encode(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Data { throw ImageCodingError.unsupportedFormat(.unknown) }
}
