import Foundation

/// One load's way through the roles, as SDWebImage 5 documents it: cache query → (derive from a
/// cached original) → download decision → download (with retries) → decode → transform → store.
///
/// Runs in a task of its own (the ``LoadCoalescer``'s), never on a caller's; every failure comes
/// out as a ``WebImageError``. It times each stage for the manager's ``ImageLoadReport``.
struct ImageLoadPipeline: Sendable {
    /// What a run gives every caller that shared it.
    struct Outcome: Sendable {
        var result: ImageResult
        var source: ImageLoadSource
        var byteCount = 0
        var durations = ImageLoadDurations()
        /// The original's encoded bytes when this run had them in hand (downloaded, or read from the
        /// disk to derive the result): what image facts read headers from without a second read.
        var originalData: Data? = nil
    }

    typealias Emit = @Sendable (ImageLoadEvent) -> Void

    let url: URL
    /// The key of the result (with thumbnail and transformer parts).
    let key: String
    /// The key of the full-size, untransformed original.
    let originalKey: String
    /// Whether anything is looked up in or stored to a cache: `false` when the key filter said
    /// "cache nothing" (the keys then only name the result for the transformer).
    let cachesResults: Bool
    let options: WebImageOptions
    let context: WebImageContext
    /// Where the result is looked up and stored.
    let cache: any ImageCaching
    /// Where the full-size original of a derived result is looked up and stored
    /// (``WebImageContext/originalCache``, else ``cache``).
    let originalCache: any ImageCaching
    let loader: any ImageLoader
    let coders: CoderRegistry
    let config: WebImageManagerConfig
    let counters: StatisticsCounters<WebImageManagerStatistics>
    /// The manager's observer (retries, disk writes nobody waited for).
    let observer: ObserverSlot
    /// The manager's disk writes nobody waits for, which its shutdown waits for.
    let backgroundWrites: BackgroundTasks

    /// The bounds of this load: the context's (``WebImageContext/limits``), else the manager's.
    var limits: ImageLimits { context.limits ?? config.limits }

    /// Whether the result is not the original itself (a thumbnail or a transform).
    var isDerived: Bool { key != originalKey }

    var decodeOptions: DecodeOptions {
        var decode = DecodeOptions(thumbnailPixelSize: context.thumbnailPixelSize,
                                   preservesAspectRatio: context.preservesAspectRatio, pixelCountLimit: limits.maxSourcePixels,
                                   firstFrameOnly: options.contains(.decodeFirstFrameOnly), scale: scaleFactor,
                                   maxFrameCount: limits.maxFrameCount, maxAnimationByteCount: limits.maxAnimationBytes, convertsToSRGB: !options.contains(.preserveColorProfile))
        decode.applyOrientation = context.appliesOrientation
        decode.maxDecodedFrames = limits.maxDecodedFrames
        decode.thumbnailCoversBox = context.thumbnailCoversBox
        decode.keepsHighBitDepth = options.contains(.preserveHighBitDepth)
        if options.contains(.scaleDownLargeImages) {
            decode.maxPixelCount = max(1, (context.scaleDownLimitBytes ?? DecodeOptions.scaleDownPixelCount * 4) / 4)
        }
        return decode
    }

    /// The context's scale, or the one a `@2x`/`@3x` file name implies.
    var scaleFactor: Double {
        if let scale = context.imageScaleFactor, scale > 0 { return scale }
        let name = url.deletingPathExtension().lastPathComponent
        if name.hasSuffix("@3x") { return 3 }
        if name.hasSuffix("@2x") { return 2 }
        return 1
    }

    func run(emit: @escaping Emit) async throws(WebImageError) -> Outcome {
        let clock = ContinuousClock()
        var durations = ImageLoadDurations()
        var cached: Outcome?
        var cachedMetadata: DiskCacheMetadata?
        if !options.contains(.fromLoaderOnly) {
            let lookupStarted = clock.now
            if let found = try await lookUp(durations: &durations, lookupStarted: lookupStarted) {
                cached = found.outcome
                cachedMetadata = found.metadata
            } else {
                durations.lookup = clock.now - lookupStarted
            }
            if let cached {
                guard options.contains(.refreshCached) else { return cached }
                emit(.cachedImage(cached.result))
                if cachedMetadata == nil, cached.result.cacheType == .memory {
                    cachedMetadata = await query(originalKey, in: isDerived ? originalCache : cache, tiers: cachesResults ? .disk : .none,
                                                 promotes: false)?.metadata
                }
            }
        }
        if options.contains(.fromCacheOnly) {
            if let cached { return cached }
            throw .notInCache(url: url)
        }
        if let shouldDownload = config.shouldDownload, !shouldDownload(url) {
            if let cached { return cached }
            throw .rejected(url: url, reason: "the manager's shouldDownload hook refused to download it")
        }
        // Fleet-wide single flight: another process may be fetching these bytes for a shared tier.
        // The claim is taken in the cache the bytes are stored to: the original's cache for a
        // derived result, the result's own cache otherwise.
        let fills = cached == nil && !options.contains(.fromLoaderOnly) && storesOriginalBytes
        let fillCache = isDerived ? originalCache : cache
        if fills {
            let waitStarted = clock.now
            if await fillCache.beginFill(forKey: originalKey) != nil,
               let found = try await lookUp(durations: &durations, lookupStarted: waitStarted) {
                counters.add(\.sharedFills)
                return found.outcome
            }
        }
        do {
            return try await fetch(cached: cached, cachedMetadata: cachedMetadata, durations: durations, emit: emit)
        } catch {
            if fills { await fillCache.abandonFill(forKey: originalKey) }
            throw error
        }
    }

    /// Downloads (revalidating `cached` when it has validators), decodes, transforms and stores.
    private func fetch(cached: Outcome?, cachedMetadata: DiskCacheMetadata?, durations: ImageLoadDurations, emit: @escaping Emit)
        async throws(WebImageError) -> Outcome {
        var durations = durations
        let validators = cachedMetadata.map { HTTPValidators(entityTag: $0.entityTag, lastModified: $0.lastModified) }
        let downloaded: (response: ImageLoadResponse, data: Data, image: Image)
        do {
            downloaded = try await download(validators: validators?.isEmpty == false && cached != nil ? validators : nil,
                                            durations: &durations, emit: emit)
        } catch .notModified(let url) {
            counters.add(\.notModified)
            if let cached { return cached }
            throw .notModified(url: url)
        }
        let transformStarted = ContinuousClock.now
        let image = try transform(downloaded.image)
        let storeStarted = ContinuousClock.now
        durations.transform = storeStarted - transformStarted
        try await store(image, original: downloaded.image, data: downloaded.data, response: downloaded.response)
        durations.store = .now - storeStarted
        // A derived result never carries the original's bytes: `data` always encodes `image` itself.
        return Outcome(result: ImageResult(image: image, data: isDerived ? nil : downloaded.data, cacheType: .none, url: url),
                       source: .network, byteCount: downloaded.response.data.count, durations: durations, originalData: downloaded.data)
    }

    /// The result from the caches: the result's own key, else (derived results) made from the
    /// cached original; `nil` on a miss.
    private func lookUp(durations: inout ImageLoadDurations, lookupStarted: ContinuousClock.Instant)
        async throws(WebImageError) -> (outcome: Outcome, metadata: DiskCacheMetadata?)? {
        if let hit = await query(key, in: cache, tiers: resultQueryTiers, promotes: resultStoreTiers.includesMemory) {
            counters.add(hit.cacheType == .memory ? \.memoryHits : \.diskHits)
            if hit.cacheType == .disk { counters.add(\.decodes) }
            if hit.cacheType == .disk && !decodeOptions.decodesFullImage {
                // The cache promotes only full decodes; this key names exactly what these options decode.
                await storeResultInMemory(hit.image, data: hit.data, metadata: hit.metadata)
            }
            durations.lookup = .now - lookupStarted
            let outcome = Outcome(result: ImageResult(image: hit.image, data: hit.data, cacheType: hit.cacheType, url: url),
                                  source: hit.cacheType == .memory ? .memory : hit.source.isSharedTier ? .shared : .disk,
                                  byteCount: hit.cacheType == .disk ? hit.data?.count ?? 0 : 0, durations: durations)
            return (outcome, hit.metadata)
        }
        guard isDerived else { return nil }
        return try await deriveFromOriginal(durations: &durations, lookupStarted: lookupStarted)
    }

    /// Whether a download's bytes are stored on disk under ``originalKey`` (the result's own key
    /// when it is not derived): only then may this load claim a shared fill of that key.
    private var storesOriginalBytes: Bool {
        isDerived ? originalStoreTiers.includesDisk : resultStoreTiers.includesDisk
    }

    /// The tiers a derived result's original is stored in.
    private var originalStoreTiers: ImageCacheType {
        guard isDerived && cachesResults else { return .none }
        return options.contains(.cacheMemoryOnly) ? (context.originalStoreCacheType == .none ? .none : .memory) : context.originalStoreCacheType
    }

    // MARK: Cache

    /// The tiers the result is looked up in.
    private var resultQueryTiers: ImageCacheType { cachesResults ? context.queryCacheType : .none }

    /// A cache query that treats an unreadable disk as a miss (the network still works).
    private func query(_ key: String, in cache: any ImageCaching, tiers: ImageCacheType, promotes: Bool) async -> ImageCacheResult? {
        guard tiers != .none else { return nil }
        // Validators are only needed to revalidate; skipping them saves a metadata read per disk hit.
        let query = ImageCacheQuery(cacheType: tiers, decodeOptions: decodeOptions, promotesToMemory: promotes,
                                    includesData: options.contains(.queryMemoryData),
                                    includesMetadata: options.contains(.refreshCached))
        return try? await cache.query(forKey: key, query: query)
    }

    /// Makes the thumbnail or transformed result from the full-size original in the cache, without the
    /// network, and stores it under its own key. The original's bytes are never rewritten.
    private func deriveFromOriginal(durations: inout ImageLoadDurations, lookupStarted: ContinuousClock.Instant)
        async throws(WebImageError) -> (outcome: Outcome, metadata: DiskCacheMetadata?)? {
        guard let original = await query(originalKey, in: originalCache, tiers: cachesResults ? originalPixelTiers(context.originalQueryCacheType) : .none,
                                         promotes: false) else { return nil }
        if original.cacheType == .disk, let data = original.data, data.count > limits.maxSourceBytes {
            throw .responseTooLarge(limit: limits.maxSourceBytes, url: url)   // a load with a lower byte limit than the one that stored it
        }
        let transformStarted = ContinuousClock.now
        durations.lookup = transformStarted - lookupStarted
        if original.cacheType == .disk { counters.add(\.decodes) }
        var image = original.image
        if original.cacheType == .memory, context.thumbnailPixelSize != nil || options.contains(.scaleDownLargeImages) {
            let size = decodeOptions.outputSize(forSource: image.size)
            if size != image.size {
                do { image = try Resampler.resample(image, to: size) } catch { throw .decodingFailed(error, url: url) }
            }
        }
        let transformed = try transform(image)
        let storeStarted = ContinuousClock.now
        durations.transform = storeStarted - transformStarted
        counters.add(\.derivedFromOriginal)
        try await storeResult(transformed, data: nil, metadata: original.metadata)
        durations.store = .now - storeStarted
        let result = ImageResult(image: transformed, data: nil, cacheType: original.cacheType, url: url)
        return (Outcome(result: result, source: .derived, byteCount: original.cacheType == .disk ? original.data?.count ?? 0 : 0,
                        durations: durations, originalData: original.cacheType == .disk ? original.data : nil), original.metadata)
    }

    /// Stores the result under ``key`` and, for a derived result, the original bytes under ``originalKey``.
    /// Every memory store comes before any disk write, so a failing disk write (with
    /// ``WebImageOptions/waitStoreCache``) leaves a derived result in memory just as a plain one.
    private func store(_ image: Image, original: Image, data: Data, response: ImageLoadResponse) async throws(WebImageError) {
        let metadata = DiskCacheMetadata(entityTag: response.validators.entityTag, lastModified: response.validators.lastModified,
                                         maxAge: response.maxAge)
        let resultData = isDerived ? nil : data
        let originalTiers = originalStoreTiers
        let originalCache = self.originalCache, originalKey = self.originalKey
        if originalPixelTiers(originalTiers).includesMemory && decodeOptions.decodesFullImage {
            try? await originalCache.store(original, data: nil, forKey: originalKey, cacheType: .memory, metadata: nil)
        }
        await storeResultInMemory(image, data: resultData, metadata: metadata)
        if originalTiers.includesDisk {
            try await onDisk(key: originalKey) { try await originalCache.storeData(data, forKey: originalKey, metadata: metadata) }
        }
        try await storeResultOnDisk(image, data: resultData, metadata: metadata)
    }

    /// The tiers the original's pixels may come from or go to: not memory when this load wants pixels
    /// other than the upright sRGB ones a memory original holds (a source colour profile, or the
    /// stored orientation), or checks them against limits of its own (a decode of the bytes does).
    /// The original's bytes on disk are the same for every load.
    private func originalPixelTiers(_ tiers: ImageCacheType) -> ImageCacheType {
        let differs = !options.isDisjoint(with: [.preserveColorProfile, .preserveHighBitDepth]) || !context.appliesOrientation
            || context.limits != nil
        return differs && tiers.includesMemory ? (tiers.includesDisk ? .disk : .none) : tiers
    }

    /// The tiers the result is stored in.
    private var resultStoreTiers: ImageCacheType {
        guard cachesResults else { return .none }
        return options.contains(.cacheMemoryOnly) ? (context.storeCacheType.includesMemory ? .memory : .none) : context.storeCacheType
    }

    /// Stores `image` under ``key`` in the store tiers: memory now, disk in the background unless
    /// ``WebImageOptions/waitStoreCache``.
    private func storeResult(_ image: Image, data: Data?, metadata: DiskCacheMetadata?) async throws(WebImageError) {
        await storeResultInMemory(image, data: data, metadata: metadata)
        try await storeResultOnDisk(image, data: data, metadata: metadata)
    }

    private func storeResultInMemory(_ image: Image, data: Data?, metadata: DiskCacheMetadata?) async {
        guard resultStoreTiers.includesMemory else { return }
        try? await cache.store(image, data: data, forKey: key, cacheType: .memory, metadata: metadata)
    }

    private func storeResultOnDisk(_ image: Image, data: Data?, metadata: DiskCacheMetadata?) async throws(WebImageError) {
        guard resultStoreTiers.includesDisk else { return }
        let cache = self.cache, key = self.key
        let serializer = context.cacheSerializer
        let write: @Sendable () async throws -> Void = {
            if let serializer {
                guard let bytes = serializer.data(for: image, originalData: data, key: key) else {
                    await cache.abandonFill(forKey: key)   // nothing stored: a claim on the key must not wait out its lifetime
                    return
                }
                try await cache.storeData(bytes, forKey: key, metadata: metadata)
            } else {
                try await cache.store(image, data: data, forKey: key, cacheType: .disk, metadata: metadata)
            }
        }
        try await onDisk(key: key, write)
    }

    /// Runs the disk write of `key` through the manager's one write step (``CacheWriteStep``):
    /// awaited with ``WebImageOptions/waitStoreCache``, else in the background.
    private func onDisk(key: String, _ write: @escaping @Sendable () async throws -> Void) async throws(WebImageError) {
        try await CacheWriteStep(backgroundWrites: backgroundWrites, observer: observer)
            .run(key: key, url: url, awaited: options.contains(.waitStoreCache), executor: context.workExecutor, write)
    }

    // MARK: Network and decoding

    /// Downloads (retrying transient failures per the retry policy) and decodes.
    private func download(validators: HTTPValidators?, durations: inout ImageLoadDurations, emit: @escaping Emit)
        async throws(WebImageError) -> (response: ImageLoadResponse, data: Data, image: Image) {
        var attempt = 1
        while true {
            do {
                return try await downloadOnce(validators: validators, durations: &durations, emit: emit)
            } catch {
                guard let delay = config.retryPolicy?.delay(afterAttempt: attempt, error: error) else { throw error }
                observer.emit { .loadRetried(url: url, attempt: attempt, error: error, delay: delay) }
                do { try await Task.sleep(for: delay) } catch { throw .cancelled(url: url) }
                attempt += 1
            }
        }
    }

    private func downloadOnce(validators: HTTPValidators?, durations: inout ImageLoadDurations, emit: @escaping Emit)
        async throws(WebImageError) -> (response: ImageLoadResponse, data: Data, image: Image) {
        let request = ImageLoadRequest(url: url, priority: options.downloadPriority, headers: context.httpHeaders,
                                       handlesCookies: options.contains(.handleCookies), validators: validators,
                                       requestModifier: context.requestModifier, responseModifier: context.responseModifier,
                                       maxResponseBytes: limits.maxSourceBytes)
        let progressive: ProgressiveDecoding? = options.contains(.progressiveLoad) && context.decryptor == nil
            ? ProgressiveDecoding(decoder: coders.makeIncrementalDecoder(options: decodeOptions),
                                  interval: config.partialImageInterval) { emit(.partialImage($0)) }
            : nil
        counters.add(\.downloads)
        let downloadStarted = ContinuousClock.now
        let response: ImageLoadResponse
        do {
            response = try await loader.load(request) { progress in
                emit(.progress(receivedBytes: progress.receivedBytes, expectedBytes: progress.expectedBytes))
                progressive?.append(progress.chunk)
            }
        } catch {
            throw WebImageError(error, url: url)
        }
        let decodeStarted = ContinuousClock.now
        durations.queued += response.metrics.queuedDuration
        durations.download += decodeStarted - downloadStarted - response.metrics.queuedDuration
        defer { durations.decode = .now - decodeStarted }
        counters.add(\.decodes)
        var data = response.data
        // A loader other than the Downloader (files, a custom one) is checked here, on arrival.
        if data.count > limits.maxSourceBytes { throw .responseTooLarge(limit: limits.maxSourceBytes, url: url) }
        if let decryptor = context.decryptor {
            guard let decrypted = decryptor(data, url) else {
                throw .rejected(url: url, reason: "the decryptor refused the downloaded bytes")
            }
            data = decrypted
        }
        try checkPlan(beforeDecoding: data)
        if let image = await progressive?.finish(expectedBytes: data.count) {
            if decodeOptions.convertsToSRGB { SRGBConverter.convert(image, decodedFrom: data) }
            return (response, data, image)
        }
        do {
            return (response, data, try coders.decode(data, options: decodeOptions))
        } catch {
            throw WebImageError(error, url: url)
        }
    }

    /// Refuses, before a pixel is decoded, a transform whose plan (``ImageTransformer/plannedSizes(for:)``)
    /// for the size the source's header gives (as the decode will make it) has an image over
    /// ``ImageLimits/maxOutputPixels``: `wi:resize=64364,cover` costs microseconds, not half a minute.
    /// Only when every image is transformed (``WebImageOptions/transformAnimatedImage``, as variants
    /// are): otherwise an animation, left alone, must not be refused for a plan it never runs.
    private func checkPlan(beforeDecoding data: Data) throws(WebImageError) {
        guard let transformer = context.transformer, options.contains(.transformAnimatedImage) else { return }
        let header = ImageHeader(data: data)
        guard let stored = header.storedSize, stored.width > 0, stored.height > 0 else { return }
        let decoded = decodeOptions.outputSize(forSource: stored)
        let swaps = (decodeOptions.applyOrientation && header.orientation.swapsDimensions) != header.containerSwapsSides
        try check(transformer.plannedSizes(for: swaps ? PixelSize(width: decoded.height, height: decoded.width) : decoded))
    }

    /// Throws ``WebImageError/transformFailed(_:url:)`` when one of `sizes` has more pixels than
    /// ``ImageLimits/maxOutputPixels`` (or a side of 0).
    private func check(_ sizes: [PixelSize]) throws(WebImageError) {
        let limit = limits.maxOutputPixels
        for size in sizes {
            let pixels = size.width.multipliedReportingOverflow(by: size.height)
            if pixels.overflow || pixels.partialValue > limit || size.width <= 0 || size.height <= 0 {
                throw .transformFailed(.invalidParameter("the transform would make a \(size.width)x\(size.height) image, "
                                                         + "over the limit of \(limit) pixels (ImageLimits.maxOutputPixels)"), url: url)
            }
        }
    }

    /// Applies the context's transformer (animated images only with ``WebImageOptions/transformAnimatedImage``).
    private func transform(_ image: Image) throws(WebImageError) -> Image {
        guard let transformer = context.transformer else { return image }
        if image.isAnimated && !options.contains(.transformAnimatedImage) { return image }
        try check(transformer.plannedSizes(for: image.size))
        do {
            return try WorkSection.run { () throws -> Image in try transformer.transformKeepingMetadata(image, forKey: key) }
        } catch let error as ImageTransformError {
            throw .transformFailed(error, url: url)
        } catch {
            throw .transformFailed(.other("\(error)"), url: url)
        }
    }
}
