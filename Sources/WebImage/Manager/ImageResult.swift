import Foundation

/// The final result of ``WebImageManager/loadImage(url:options:context:)``.
public struct ImageResult: Sendable {
    /// The decoded (and, with a transformer, transformed) image.
    public var image: Image
    /// The encoded bytes the image came from: the download, or the disk entry. `nil` for a memory
    /// hit (unless ``WebImageOptions/queryMemoryData``) and for results derived from a cached
    /// original (thumbnails and transforms).
    public var data: Data?
    /// Where the image came from: ``ImageCacheType/memory``, ``ImageCacheType/disk``, or
    /// ``ImageCacheType/none`` for the network.
    public var cacheType: ImageCacheType
    /// The URL that was asked for.
    public var url: URL

    /// Creates a result.
    public init(image: Image, data: Data?, cacheType: ImageCacheType, url: URL) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.url = url
    }
}

/// What ``WebImageManager/imageEvents(url:options:context:)`` delivers, in order: progress and
/// partial images while downloading, the cached image first under ``WebImageOptions/refreshCached``,
/// then exactly one `.finished`.
public enum ImageLoadEvent: Sendable {
    /// Body bytes received so far, and the size the server announced (if it did).
    case progress(receivedBytes: Int, expectedBytes: Int?)
    /// A partially decoded image (with ``WebImageOptions/progressiveLoad``).
    case partialImage(Image)
    /// The cached image, delivered before revalidating it (with ``WebImageOptions/refreshCached``).
    case cachedImage(ImageResult)
    /// The final result; always the last event of a load that succeeds.
    case finished(ImageResult)
}
