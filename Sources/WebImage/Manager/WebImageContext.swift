import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Transforms downloaded bytes before they are decoded or cached (decryption, say); returning `nil`
/// fails the load with ``WebImageError/rejected(url:reason:)``.
public typealias DataDecryptor = @Sendable (Data, URL) -> Data?

/// Typed per-load settings for ``WebImageManager`` (SDWebImage's `SDWebImageContext`, without its
/// string keys). Every property defaults to "not set": the manager's own cache, loader and coders,
/// full-size decoding, both cache tiers.
public struct WebImageContext: Sendable {
    /// Transforms the decoded image; its ``ImageTransformer/key`` becomes part of the cache key;
    /// default `nil`.
    public var transformer: (any ImageTransformer)?
    /// Turns the URL into its cache key; default `nil` (the URL's `absoluteString`).
    public var cacheKeyFilter: (any CacheKeyFilter)?
    /// Decides the bytes stored on disk for images this load stores; default `nil` (the cache's own).
    /// Honoured when the cache is an ``ImageCache`` or lets a store pass it on.
    public var cacheSerializer: (any CacheSerializer)?
    /// The tiers queried for the image under its (possibly transformed) key; default
    /// ``ImageCacheType/all``.
    public var queryCacheType: ImageCacheType
    /// The tiers the result is stored in; default ``ImageCacheType/all``
    /// (``WebImageOptions/cacheMemoryOnly`` makes it ``ImageCacheType/memory``).
    public var storeCacheType: ImageCacheType
    /// For a transformed or thumbnail load that misses: the tiers queried for the full-size original,
    /// from which the result is derived without the network; default ``ImageCacheType/disk``.
    public var originalQueryCacheType: ImageCacheType
    /// For a transformed or thumbnail load that downloads: the tiers the original bytes are stored
    /// in, under the untransformed key; default ``ImageCacheType/disk``.
    public var originalStoreCacheType: ImageCacheType
    /// A cache used instead of the manager's for this load; default `nil`.
    public var cache: (any ImageCaching)?
    /// A loader used instead of the manager's for this load; default `nil`.
    public var loader: (any ImageLoader)?
    /// Coders used instead of the manager's for this load; default `nil`.
    public var coders: CoderRegistry?
    /// Decode a thumbnail fitting this size (cached under its own key); default `nil` (full size).
    public var thumbnailPixelSize: PixelSize?
    /// Whether a thumbnail keeps the source's aspect ratio; default `true`.
    public var preservesAspectRatio: Bool
    /// The most bytes of RGBA pixels ``WebImageOptions/scaleDownLargeImages`` lets an image keep;
    /// default `nil`, meaning 60 MB as in SDWebImage.
    public var scaleDownLimitBytes: Int?
    /// The image's scale (pixels per point); default `nil`: 2 or 3 when the file name ends in `@2x`
    /// or `@3x`, else 1.
    public var imageScaleFactor: Double?
    /// Rewrites the HTTP request before it is sent; default `nil`.
    public var requestModifier: RequestModifier?
    /// Checks or rewrites the HTTP response before its body is read; default `nil`.
    public var responseModifier: ResponseModifier?
    /// Transforms the downloaded bytes before decoding and caching; default `nil`.
    public var decryptor: DataDecryptor?
    /// Extra HTTP header fields for this load; default none.
    public var httpHeaders: [String: String]

    /// Creates a context; every parameter defaults to the property's documented default.
    public init(
        transformer: (any ImageTransformer)? = nil, cacheKeyFilter: (any CacheKeyFilter)? = nil,
        cacheSerializer: (any CacheSerializer)? = nil, queryCacheType: ImageCacheType = .all,
        storeCacheType: ImageCacheType = .all, originalQueryCacheType: ImageCacheType = .disk,
        originalStoreCacheType: ImageCacheType = .disk, cache: (any ImageCaching)? = nil,
        loader: (any ImageLoader)? = nil, coders: CoderRegistry? = nil, thumbnailPixelSize: PixelSize? = nil,
        preservesAspectRatio: Bool = true, scaleDownLimitBytes: Int? = nil, imageScaleFactor: Double? = nil,
        requestModifier: RequestModifier? = nil, responseModifier: ResponseModifier? = nil,
        decryptor: DataDecryptor? = nil, httpHeaders: [String: String] = [:]
    ) {
        self.transformer = transformer
        self.cacheKeyFilter = cacheKeyFilter
        self.cacheSerializer = cacheSerializer
        self.queryCacheType = queryCacheType
        self.storeCacheType = storeCacheType
        self.originalQueryCacheType = originalQueryCacheType
        self.originalStoreCacheType = originalStoreCacheType
        self.cache = cache
        self.loader = loader
        self.coders = coders
        self.thumbnailPixelSize = thumbnailPixelSize
        self.preservesAspectRatio = preservesAspectRatio
        self.scaleDownLimitBytes = scaleDownLimitBytes
        self.imageScaleFactor = imageScaleFactor
        self.requestModifier = requestModifier
        self.responseModifier = responseModifier
        self.decryptor = decryptor
        self.httpHeaders = httpHeaders
    }

    /// Whether two loads with these contexts may share one result: nothing the manager cannot
    /// compare (overridden roles, modifiers, serializer, decryptor) is set.
    var isShareable: Bool {
        cache == nil && loader == nil && coders == nil && requestModifier == nil && responseModifier == nil
            && decryptor == nil && cacheSerializer == nil
    }
}
