import Foundation

/// Makes a new image from a decoded one (SDWebImage's `SDImageTransformer`): a resize, a crop, round
/// corners, or a pipeline of several.
///
/// ``WebImageManager`` applies the transformer of a load's ``WebImageContext`` after decoding, off
/// its actor, and caches the result under the original key with ``key`` inserted (see
/// ``WebImageManager/cacheKey(for:context:)``). Transformers must be pure: the same input and
/// parameters always give the same output, and the input image is never changed.
public protocol ImageTransformer: Sendable {
    /// A string that is stable and unique for this transformer's type and parameters; it becomes
    /// part of cache keys, so two transformers with the same key must produce the same pixels.
    var key: String { get }

    /// Returns the transformed image.
    /// - Parameters:
    ///   - image: the decoded image; never modified.
    ///   - key: the cache key the result will be stored under.
    /// - Throws: an error saying why the image cannot be transformed (an empty crop, say);
    ///   ``WebImageManager`` reports it as ``WebImageError/transformFailed(url:reason:)``.
    func transform(_ image: Image, forKey key: String) throws -> Image
}
