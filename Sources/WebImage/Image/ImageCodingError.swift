/// Why an image could not be decoded or encoded.
///
/// Every coder throws these; ``WebImageError`` wraps them with the URL that failed.
public enum ImageCodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No registered coder handles these bytes (``ImageFormat/unknown`` if the format was not recognised).
    case unsupportedFormat(ImageFormat)
    /// The bytes claim to be `format` but break its rules; `reason` is the library's own message.
    case corruptData(format: ImageFormat, reason: String)
    /// The bytes are a valid `format` file using a feature this coder's library does not support
    /// (such as 12-bit JPEG samples); `reason` says which.
    case unsupportedFeature(format: ImageFormat, reason: String)
    /// The data ends before the image is complete (an interrupted download, a truncated file).
    case truncatedData(format: ImageFormat)
    /// The header declares more pixels than ``DecodeOptions/pixelCountLimit`` allows; nothing was allocated.
    case imageTooLarge(width: Int, height: Int, limit: Int)
    /// An animation has more frames than ``DecodeOptions/maxFrameCount``, or its frames would take more
    /// than ``DecodeOptions/maxAnimationByteCount`` bytes decoded; refused before any frame was allocated.
    case animationTooLarge(frameCount: Int, byteCount: Int, frameLimit: Int, byteLimit: Int)
    /// ``DecodeOptions/page`` asked for a page the file does not have (it has `pageCount`).
    case pageNotFound(page: Int, pageCount: Int)
    /// An allocation for pixels failed.
    case insufficientMemory(byteCount: Int)
    /// No coder can write `format`, or not from `pixelFormat`.
    case unsupportedEncoding(format: ImageFormat, pixelFormat: PixelFormat)
    /// The encoder's library reported a failure.
    case encodingFailed(format: ImageFormat, reason: String)
    /// An image was built with impossible geometry (zero size, too few bytes, ...).
    case invalidImage(String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .unsupportedFormat(let format):
            format == .unknown
                ? "the data is not an image format WebImage recognises"
                : "no coder is registered that can decode \(format) images"
        case .corruptData(let format, let reason):
            "the \(format) data is corrupt: \(reason)"
        case .unsupportedFeature(let format, let reason):
            "the \(format) data uses a feature WebImage cannot decode: \(reason)"
        case .truncatedData(let format):
            "the \(format) data ends before the image is complete (truncated file or download)"
        case .imageTooLarge(let width, let height, let limit):
            "the image declares \(width)x\(height) pixels, more than the limit of \(limit) pixels (DecodeOptions.pixelCountLimit)"
        case .animationTooLarge(let frameCount, let byteCount, let frameLimit, let byteLimit):
            "the animation has \(frameCount) frames (\(byteCount) bytes decoded), more than the limits of \(frameLimit) frames "
                + "and \(byteLimit) bytes (DecodeOptions.maxFrameCount, maxAnimationByteCount; or decode the first frame only)"
        case .pageNotFound(let page, let pageCount):
            "the file has \(pageCount) page\(pageCount == 1 ? "" : "s"); page \(page) (counted from 0) does not exist"
        case .insufficientMemory(let byteCount):
            "could not allocate \(byteCount) bytes for pixels"
        case .unsupportedEncoding(let format, let pixelFormat):
            "no coder can encode \(pixelFormat) pixels as \(format)"
        case .encodingFailed(let format, let reason):
            "encoding \(format) failed: \(reason)"
        case .invalidImage(let reason):
            "invalid image: \(reason)"
        }
    }
}
