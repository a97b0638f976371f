import Foundation

extension WebImageManager {
    /// Entries the memory tier of image facts keeps (each a few hundred bytes).
    public static let infoMemoryCountLimit = 4096

    /// The facts of the image at `url` — its upright pixel size, format, frames and duration, byte
    /// size, alpha, orientation, colour profile name, BlurHash, ThumbHash, average and dominant
    /// colours — for a page to reserve the right box and paint a placeholder at once.
    ///
    /// - **Warm**: facts stored before come from their own memory tier, or from the cache's stored
    ///   bytes under their own key (a small JSON document beside the image's entries), **without
    ///   decoding anything**.
    /// - **Cold**: the image is loaded as ``loadImage(url:options:context:)`` loads it — the download
    ///   shared with every other load of the URL, the original's bytes stored as the context says —
    ///   but decoded small (to fit 100×100; every frame of an animation), never at full size. The
    ///   sizes come from the source's header. Computed once for all concurrent callers, then
    ///   stored in memory and on disk (in the background unless ``WebImageOptions/waitStoreCache``).
    ///
    /// The context's thumbnail size and transformer do not apply: facts describe the source.
    ///
    /// - Parameters:
    ///   - url: the image.
    ///   - blurHashComponents: the BlurHash's components along the width and the height, 1–9 each;
    ///     default 4×3 (facts of other counts are stored under keys of their own).
    ///   - options: as for ``loadImage(url:options:context:)``; default `[]`.
    ///   - context: as for ``loadImage(url:options:context:)`` (cache, key filter, limits, headers);
    ///     default none.
    /// - Returns: the facts, with ``ImageInfo/cacheType`` saying where they came from.
    /// - Throws: ``WebImageError``: whatever ``loadImage(url:options:context:)`` throws, `shutDown`,
    ///   `rejected` for component counts outside 1–9.
    public func loadImageInfo(url: URL?, blurHashComponents: (x: Int, y: Int) = (4, 3), options: WebImageOptions = [],
                              context: WebImageContext = WebImageContext()) async throws -> ImageInfo {
        guard let url, !url.absoluteString.isEmpty else { throw WebImageError.invalidURL(url?.absoluteString) }
        let components = blurHashComponents
        guard (1...9).contains(components.x), (1...9).contains(components.y) else {
            throw WebImageError.rejected(url: url, reason: PlaceholderError.invalidComponentCount(x: components.x, y: components.y).description)
        }
        if isShutDown { throw WebImageError.shutDown(url: url) }
        var options = options
        var context = context
        processOptions(url: url, &options, &context)
        if context.transformer != nil { context.transformer = nil }
        if context.thumbnailPixelSize != nil { context.thumbnailPixelSize = nil }
        let key = infoCacheKey(for: url, blurHashComponents: components, context: context, options: options)
        let cache = context.cache ?? self.cache
        if let key, !options.contains(.fromLoaderOnly), let info = await facts.lookUp(forKey: key, context: context, cache: cache) {
            return info
        }
        if options.contains(.fromCacheOnly) { throw WebImageError.notInCache(url: url) }
        let smallContext = Self.infoDecodeContext(context)
        let smallOptions = options.subtracting(.decodeFirstFrameOnly)
        let (storeOptions, storeContext) = (options, context)
        let claimsFill = context.storeCacheType.includesDisk && !options.contains(.cacheMemoryOnly) && !options.contains(.fromLoaderOnly)
        let made = try await facts.make(key: key, url: url, context: context, cache: cache, claimsFill: claimsFill, joined: { _ in }) {
            () async throws(WebImageError) in
            var (image, source) = try await self.loadPixelsAndSource(url: url, options: smallOptions, context: smallContext)
            if source == nil {   // a cache that keeps no bytes: the source once more, from the loader
                (image, source) = try await self.loadPixelsAndSource(url: url, options: smallOptions.union(.fromLoaderOnly), context: smallContext)
            }
            guard let source else { throw .rejected(url: url, reason: "the source's bytes are not available to read its header") }
            let info: ImageInfo
            do {
                info = try ImageInfo(source: source, image: image, blurHashComponents: components)
            } catch {
                throw .decodingFailed(error as? ImageCodingError ?? .invalidImage("\(error)"), url: url)
            }
            if let key {
                try await self.facts.store(info, forKey: key, options: storeOptions, context: storeContext, cache: cache, url: url,
                                           writes: self.cacheWrites)
            }
            return MadeProduct(product: info, duration: .zero)
        }
        return made.product
    }

    /// The key image facts are stored under: the image's key with `-Info(v1)` inserted
    /// (`-Info(v1,bh5x2)` for other BlurHash components); `nil` when the key filter says "cache
    /// nothing". The context's thumbnail size and transformer are not part of it.
    public func infoCacheKey(for url: URL, blurHashComponents: (x: Int, y: Int) = (4, 3), context: WebImageContext = WebImageContext(),
                             options: WebImageOptions = []) -> String? {
        var context = context
        if context.transformer != nil { context.transformer = nil }
        if context.thumbnailPixelSize != nil { context.thumbnailPixelSize = nil }
        let part = blurHashComponents == (4, 3) ? "Info(v1)" : "Info(v1,bh\(blurHashComponents.x)x\(blurHashComponents.y))"
        return cacheKey(for: url, context: context, options: options).map { CacheKeys.inserting(part, into: $0) }
    }

    /// The load the facts decode: every frame, upright, fitting 100×100, kept in memory only (a
    /// 100-pixel decode is not worth a disk entry of its own; the original's bytes are stored as
    /// the context says).
    static func infoDecodeContext(_ context: WebImageContext) -> WebImageContext {
        var small = context
        small.thumbnailPixelSize = PixelSize(width: PlaceholderPixels.maxSide, height: PlaceholderPixels.maxSide)
        small.preservesAspectRatio = true
        small.thumbnailCoversBox = false
        small.appliesOrientation = true
        small.storeCacheType = context.storeCacheType.includesMemory ? .memory : .none
        return small
    }
}
