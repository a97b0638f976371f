import Foundation

/// Makes a new image from a decoded one (SDWebImage's `SDImageTransformer`): a resize, a crop, round
/// corners, or a pipeline of several.
///
/// ``WebImageManager`` applies the transformer of a load's ``WebImageContext`` after decoding, in
/// the load's own task, and caches the result under the original key with ``key`` inserted (see
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
    ///   ``WebImageManager`` reports it as ``WebImageError/transformFailed(_:url:)``.
    func transform(_ image: Image, forKey key: String) throws -> Image

    /// Whether ``WebImageManager`` gives the transformed image the input's metadata (its source
    /// ``Image/format`` and ``Image/scale``), as SDWebImage's `preserveImageMetadata` does; default
    /// `true`. The default cache serializer then stores a transformed image in its source's format.
    /// Return `false` from a transformer whose output is deliberately another format or scale.
    var preservesImageMetadata: Bool { get }

    /// The sizes of the images ``transform(_:forKey:)`` would make from a `source`-sized image, in
    /// order (the last is the result), worked out without touching a pixel; default empty: the
    /// transformer cannot tell, and it is not checked before it runs. ``WebImageManager`` refuses a
    /// plan with an image over ``ImageLimits/maxOutputPixels`` before decoding when the source's
    /// header gives its size, and again before transforming: an absurd request costs no pixel work.
    func plannedSizes(for source: PixelSize) -> [PixelSize]

    /// Whether ``transform(_:forKey:)`` takes images of 16 bits per channel
    /// (``PixelFormat/isHighBitDepth``); default `false`: ``WebImageManager`` hands it the image
    /// narrowed to 8 bits (``Image/reducedToEightBits()``), so a transformer written for 8-bit
    /// samples never sees 16-bit ones.
    var acceptsHighBitDepth: Bool { get }
}

extension ImageTransformer {
    /// `true`: a transformed image keeps its input's format and scale.
    public var preservesImageMetadata: Bool { true }

    /// Empty: a transformer that does not plan is not checked before it runs.
    public func plannedSizes(for source: PixelSize) -> [PixelSize] { [] }

    /// `false`: a transformer is handed 8-bit images unless it says otherwise.
    public var acceptsHighBitDepth: Bool { false }

    /// Transforms `image` (narrowed to 8 bits first unless ``acceptsHighBitDepth``) and, when
    /// ``preservesImageMetadata`` is true, gives the result the input's format and scale: how
    /// ``WebImageManager`` runs a transformer.
    /// - Throws: what ``transform(_:forKey:)`` throws.
    func transformKeepingMetadata(_ image: Image, forKey key: String) throws -> Image {
        let input = image.pixelFormat.isHighBitDepth && !acceptsHighBitDepth ? try image.reducedToEightBits() : image
        let result = try transform(input, forKey: key)
        return preservesImageMetadata ? result.keepingMetadata(of: image) : result
    }
}
