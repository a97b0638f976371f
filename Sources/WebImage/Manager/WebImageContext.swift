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
    /// The settings themselves, behind one immutable reference: a context costs one reference count
    /// to copy, the default one is shared, and the memory-hit path reads two precomputed flags
    /// instead of testing existentials.
    struct Values: Sendable {
        var transformer: (any ImageTransformer)?
        var cacheKeyFilter: (any CacheKeyFilter)?
        var cacheSerializer: (any CacheSerializer)?
        var queryCacheType: ImageCacheType = .all
        var storeCacheType: ImageCacheType = .all
        var originalQueryCacheType: ImageCacheType = .disk
        var originalStoreCacheType: ImageCacheType = .disk
        var cache: (any ImageCaching)?
        var originalCache: (any ImageCaching)?
        var loader: (any ImageLoader)?
        var coders: CoderRegistry?
        var thumbnailPixelSize: PixelSize?
        var preservesAspectRatio: Bool = true
        var appliesOrientation: Bool = true
        var thumbnailCoversBox: Bool = false
        var limits: ImageLimits?
        var scaleDownLimitBytes: Int?
        var imageScaleFactor: Double?
        var requestModifier: RequestModifier?
        var responseModifier: ResponseModifier?
        var decryptor: DataDecryptor?
        var httpHeaders: [String: String] = [:]
        var workExecutor: (any TaskExecutor)?
    }

    /// Immutable storage of ``Values`` and what the hot path asks of them.
    final class Box: Sendable {
        let values: Values
        /// Whether a transformer, key filter or thumbnail size is set: without one, the cache key
        /// is the URL's `absoluteString`.
        let derivesCacheKey: Bool
        /// Whether ``WebImageContext/cache`` is set.
        let overridesCache: Bool

        init(_ values: Values) {
            self.values = values
            derivesCacheKey = values.transformer != nil || values.cacheKeyFilter != nil || values.thumbnailPixelSize != nil
                || !values.appliesOrientation || values.limits != nil
            overridesCache = values.cache != nil
        }

        static let defaults = Box(Values())
    }

    private var box: Box

    /// Transforms the decoded image; its ``ImageTransformer/key`` becomes part of the cache key;
    /// default `nil`.
    public var transformer: (any ImageTransformer)? {
        get { box.values.transformer }
        set { update { $0.transformer = newValue } }
    }
    /// Turns the URL into its cache key; default `nil` (the URL's `absoluteString`).
    public var cacheKeyFilter: (any CacheKeyFilter)? {
        get { box.values.cacheKeyFilter }
        set { update { $0.cacheKeyFilter = newValue } }
    }
    /// Decides the bytes stored on disk for images this load stores; default `nil` (the cache's own).
    /// Honoured when the cache is an ``ImageCache`` or lets a store pass it on.
    public var cacheSerializer: (any CacheSerializer)? {
        get { box.values.cacheSerializer }
        set { update { $0.cacheSerializer = newValue } }
    }
    /// The tiers queried for the image under its (possibly transformed) key; default
    /// ``ImageCacheType/all``.
    public var queryCacheType: ImageCacheType {
        get { box.values.queryCacheType }
        set { update { $0.queryCacheType = newValue } }
    }
    /// The tiers the result is stored in; default ``ImageCacheType/all``
    /// (``WebImageOptions/cacheMemoryOnly`` makes it ``ImageCacheType/memory``).
    public var storeCacheType: ImageCacheType {
        get { box.values.storeCacheType }
        set { update { $0.storeCacheType = newValue } }
    }
    /// For a transformed or thumbnail load that misses: the tiers queried for the full-size original,
    /// from which the result is derived without the network; default ``ImageCacheType/disk``.
    public var originalQueryCacheType: ImageCacheType {
        get { box.values.originalQueryCacheType }
        set { update { $0.originalQueryCacheType = newValue } }
    }
    /// For a transformed or thumbnail load that downloads: the tiers the original bytes are stored
    /// in, under the untransformed key; default ``ImageCacheType/disk``.
    public var originalStoreCacheType: ImageCacheType {
        get { box.values.originalStoreCacheType }
        set { update { $0.originalStoreCacheType = newValue } }
    }
    /// A cache used instead of the manager's for this load; default `nil`.
    public var cache: (any ImageCaching)? {
        get { box.values.cache }
        set { update { $0.cache = newValue } }
    }
    /// For a transformed or thumbnail load: the cache its full-size original is queried in and stored
    /// to (SDWebImage's `originalImageCache`), so originals and derived images can live apart;
    /// default `nil` (the same cache as the result: ``cache``, or the manager's).
    public var originalCache: (any ImageCaching)? {
        get { box.values.originalCache }
        set { update { $0.originalCache = newValue } }
    }
    /// A loader used instead of the manager's for this load; default `nil`.
    public var loader: (any ImageLoader)? {
        get { box.values.loader }
        set { update { $0.loader = newValue } }
    }
    /// Coders used instead of the manager's for this load; default `nil`.
    public var coders: CoderRegistry? {
        get { box.values.coders }
        set { update { $0.coders = newValue } }
    }
    /// Decode a thumbnail fitting this size (cached under its own key); default `nil` (full size).
    public var thumbnailPixelSize: PixelSize? {
        get { box.values.thumbnailPixelSize }
        set { update { $0.thumbnailPixelSize = newValue } }
    }
    /// Whether a thumbnail keeps the source's aspect ratio; default `true`.
    public var preservesAspectRatio: Bool {
        get { box.values.preservesAspectRatio }
        set { update { $0.preservesAspectRatio = newValue } }
    }
    /// Bounds for this load in place of the manager's (``WebImageManagerConfig/limits``): a request
    /// that may read, decode or produce less, or more (imgproxy's security options); default `nil`,
    /// the manager's. Such a load is cached and shared under its own key (`Limits(...)` inserted), so
    /// a stricter load never fails another and a looser one never answers a stricter one.
    public var limits: ImageLimits? {
        get { box.values.limits }
        set { update { $0.limits = newValue } }
    }
    /// Whether a thumbnail covers ``thumbnailPixelSize`` (the aspect ratio kept, both sides at least
    /// the box's) instead of fitting inside it; default `false`. What a transformer that crops to fill
    /// the box needs (``ProcessingTransformer`` with `fill`): the decode is as small as the crop allows.
    /// Cached under its own key (`Thumbnail(w,h,cover)`).
    public var thumbnailCoversBox: Bool {
        get { box.values.thumbnailCoversBox }
        set { update { $0.thumbnailCoversBox = newValue } }
    }
    /// Whether decoding turns the image upright by its EXIF (or AVIF/HEIF) orientation; default
    /// `true`. `false` keeps the stored pixels, with ``Image/orientation`` saying how they should be
    /// shown (imgproxy's `auto_rotate:0`); the result is cached under its own key
    /// (`-Unoriented` inserted) and is never derived from an upright original in memory.
    public var appliesOrientation: Bool {
        get { box.values.appliesOrientation }
        set { update { $0.appliesOrientation = newValue } }
    }
    /// The most bytes of RGBA pixels ``WebImageOptions/scaleDownLargeImages`` lets an image keep;
    /// default `nil`, meaning 60 MB as in SDWebImage.
    public var scaleDownLimitBytes: Int? {
        get { box.values.scaleDownLimitBytes }
        set { update { $0.scaleDownLimitBytes = newValue } }
    }
    /// The image's scale (pixels per point); default `nil`: 2 or 3 when the file name ends in `@2x`
    /// or `@3x`, else 1.
    public var imageScaleFactor: Double? {
        get { box.values.imageScaleFactor }
        set { update { $0.imageScaleFactor = newValue } }
    }
    /// Rewrites the HTTP request before it is sent; default `nil`.
    public var requestModifier: RequestModifier? {
        get { box.values.requestModifier }
        set { update { $0.requestModifier = newValue } }
    }
    /// Checks or rewrites the HTTP response before its body is read; default `nil`.
    public var responseModifier: ResponseModifier? {
        get { box.values.responseModifier }
        set { update { $0.responseModifier = newValue } }
    }
    /// Transforms the downloaded bytes before decoding and caching; default `nil`.
    public var decryptor: DataDecryptor? {
        get { box.values.decryptor }
        set { update { $0.decryptor = newValue } }
    }
    /// Extra HTTP header fields for this load; default none.
    public var httpHeaders: [String: String] {
        get { box.values.httpHeaders }
        set { update { $0.httpHeaders = newValue } }
    }

    /// The executor the work this call starts runs on: its download's handling, decode, transform
    /// and encode, which the manager runs in a task of its own, shared by every caller that joins it
    /// (an unstructured task does not inherit the caller's task executor preference, so it would
    /// run on the global concurrent executor). Callers that join work under way share it where it
    /// runs. The disk writes the call does not wait for (the original's, the variant's, an info's)
    /// start on it too. Not part of any key. Default `nil`: the global concurrent executor.
    public var workExecutor: (any TaskExecutor)? {
        get { box.values.workExecutor }
        set { update { $0.workExecutor = newValue } }
    }

    /// Creates a context with every property at its documented default (shared, so it costs nothing).
    public init() {
        box = Box.defaults
    }

    /// Creates a context; every parameter defaults to the property's documented default.
    public init(
        transformer: (any ImageTransformer)? = nil, cacheKeyFilter: (any CacheKeyFilter)? = nil,
        cacheSerializer: (any CacheSerializer)? = nil, queryCacheType: ImageCacheType = .all,
        storeCacheType: ImageCacheType = .all, originalQueryCacheType: ImageCacheType = .disk,
        originalStoreCacheType: ImageCacheType = .disk, cache: (any ImageCaching)? = nil,
        originalCache: (any ImageCaching)? = nil, loader: (any ImageLoader)? = nil, coders: CoderRegistry? = nil,
        thumbnailPixelSize: PixelSize? = nil,
        preservesAspectRatio: Bool = true, scaleDownLimitBytes: Int? = nil, imageScaleFactor: Double? = nil,
        requestModifier: RequestModifier? = nil, responseModifier: ResponseModifier? = nil,
        decryptor: DataDecryptor? = nil, httpHeaders: [String: String] = [:]
    ) {
        box = Box(Values(
            transformer: transformer, cacheKeyFilter: cacheKeyFilter, cacheSerializer: cacheSerializer,
            queryCacheType: queryCacheType, storeCacheType: storeCacheType, originalQueryCacheType: originalQueryCacheType,
            originalStoreCacheType: originalStoreCacheType, cache: cache, originalCache: originalCache, loader: loader, coders: coders,
            thumbnailPixelSize: thumbnailPixelSize, preservesAspectRatio: preservesAspectRatio,
            scaleDownLimitBytes: scaleDownLimitBytes, imageScaleFactor: imageScaleFactor, requestModifier: requestModifier,
            responseModifier: responseModifier, decryptor: decryptor, httpHeaders: httpHeaders))
    }

    /// Whether a transformer, key filter or thumbnail size is set: without one, the cache key is the
    /// URL's `absoluteString`.
    var derivesCacheKey: Bool { box.derivesCacheKey }
    /// Whether ``cache`` is set.
    var overridesCache: Bool { box.overridesCache }

    private mutating func update(_ change: (inout Values) -> Void) {
        var values = box.values
        change(&values)
        box = Box(values)
    }

    /// Whether two loads with these contexts may share one result: nothing the manager cannot
    /// compare (overridden roles, modifiers, serializer, decryptor) is set.
    var isShareable: Bool {
        cache == nil && originalCache == nil && loader == nil && coders == nil && requestModifier == nil && responseModifier == nil
            && decryptor == nil && cacheSerializer == nil
    }
}
