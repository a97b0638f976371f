import Foundation

/// The final result of ``WebImageManager/loadImage(url:options:context:)``.
public struct ImageResult: Sendable {
    /// The decoded (and, with a transformer, transformed) image.
    public var image: Image
    /// Encoded bytes of ``image`` itself, so that image and bytes always match: the download of a
    /// plain load, or the disk entry stored under the result's key (a cached thumbnail's own bytes).
    /// `nil` for a thumbnail or transformed result made from other bytes (downloaded or derived from
    /// the cached original: SDWebImage's rule), and for a memory hit unless
    /// ``WebImageOptions/queryMemoryData`` reads the entry. With
    /// ``WebImageOptions/scaleDownLargeImages`` a plain load keeps the source's bytes, which decode to
    /// the full-size image the result was scaled from.
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
