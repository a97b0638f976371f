/// Why a built-in ``ImageTransformer`` could not make its image, or why a transform specification
/// could not be read.
///
/// ``WebImageManager`` reports a transformer's failure as ``WebImageError/transformFailed(_:url:)``
/// carrying this error (a custom transformer's own error becomes ``other(_:)``).
public enum ImageTransformError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A parameter is out of range for the image (a size of zero, a negative radius); the text says which.
    case invalidParameter(String)
    /// The transform leaves no pixel, such as a crop rectangle outside the image.
    case emptyResult(String)
    /// The memory for the new pixels could not be allocated.
    case insufficientMemory(byteCount: Int)
    /// A transform specification (``PipelineTransformer/init(parsing:)``) cannot be read; the text
    /// names the step and what was expected.
    case invalidSpecification(String)
    /// A custom transformer threw an error of its own; the text is that error's description.
    case other(String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .invalidParameter(let reason): "invalid transform parameter: \(reason)"
        case .emptyResult(let reason): "the transform leaves no pixels: \(reason)"
        case .insufficientMemory(let byteCount): "could not allocate \(byteCount) bytes for the transformed pixels"
        case .invalidSpecification(let reason): "invalid transform specification: \(reason)"
        case .other(let reason): reason
        }
    }
}
