/// Why a placeholder (``BlurHash``, ``ThumbHash``) could not be made or read.
public enum PlaceholderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A BlurHash needs 1 to 9 components on each axis.
    case invalidComponentCount(x: Int, y: Int)
    /// A BlurHash string or ThumbHash bytes are malformed; `reason` says how.
    case invalidHash(reason: String)
    /// A decoded placeholder was asked for at a size that is not positive or is too large
    /// (at most ``BlurHash/maxDecodedPixelCount`` pixels).
    case invalidSize(width: Int, height: Int)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .invalidComponentCount(let x, let y):
            "a BlurHash has 1 to 9 components per axis, not \(x)x\(y)"
        case .invalidHash(let reason):
            "not a valid placeholder: \(reason)"
        case .invalidSize(let width, let height):
            "a placeholder cannot be drawn at \(width)x\(height)"
        }
    }
}
