import Foundation
import Synchronization

/// Loads images by URL through a cache, a loader and coders (SDWebImage's `SDWebImageManager`): the
/// call a user writes.
///
/// ```swift
/// let result = try await WebImageManager.shared.loadImage(url: url, context: .init(thumbnailPixelSize: PixelSize(width: 256, height: 256)))
/// ```
///
/// A load checks the failed-URL blocklist, queries the cache (memory, then disk), derives thumbnails
/// and transforms from a cached original when it can, downloads otherwise, decodes and transforms
/// in the load's own task, stores the result, and returns exactly one result or throws one ``WebImageError``.
/// Partial images, progress and the cached image of a revalidation are events
/// (``imageEvents(url:options:context:)``), never extra results.
///
/// Concurrent loads of the same cache key share one download, decode and transform; loads of the
/// same URL with different thumbnail sizes or transforms share the download (through the
/// ``Downloader``) and each get their own result. A caller whose task is cancelled stops waiting at
/// once; shared work stops only when no caller waits for it.
///
/// ## Concurrency: a lock-based class, not an actor
///
/// Every member may be called from any thread or task, and none hops anywhere: a memory-cache hit
/// returns without suspending. The state is isolated as follows:
///
/// - loads under way: the ``LoadCoalescer``'s `Mutex` (a ``SharedWork`` machine per cache key);
/// - the configuration: `settings` (a `Mutex`), with the flags the memory-hit path reads (options
///   processor set, shut down, observed) mirrored in one atomic (`hotFlags`);
/// - the failed-URL blocklist, the counters, the observer: each behind a lock of its own;
/// - the lifecycle (running → shutting down → shut down): `lifecycle` (a `Mutex`).
///
/// The work itself (query, download, decode, transform, store) runs in the coalescer's tasks,
/// created from the caller's task, never on a thread of the manager's; disk writes nobody waits for
/// run in ``BackgroundTasks`` that ``shutdown(loadsInFlight:)`` waits for.
public final class WebImageManager: Sendable {
    /// The manager most code uses: ``ImageCache/shared``, ``LoadersManager/shared`` (HTTP, files and
    /// data URLs) and ``CoderRegistry/shared``.
    public static let shared = WebImageManager()

    /// The cache loads query and store into (unless a context overrides it).
    public let cache: any ImageCaching
    /// The loader downloads go through (unless a context overrides it).
    public let loader: any ImageLoader
    /// The coders images are decoded with (unless a context overrides them).
    public let coders: CoderRegistry

    let settings: Mutex<WebImageManagerConfig>
    /// What the memory-hit path must know, in one relaxed load: 0 means "take the fast path".
    let hotFlags = Atomic<UInt8>(0)
    let blocklist = FailedURLBlocklist()
    let coalescer = LoadCoalescer<ImageLoadPipeline.Outcome>()
    /// Encoded variants: their memory tier (``WebImageManagerConfig/maxVariantMemoryCost``), stored
    /// bytes and encodes under way, one per variant key.
    let variants: DerivedProductStore<ImageVariant>
    /// Image facts: their memory tier (at most ``infoMemoryCountLimit`` entries, a few hundred bytes
    /// each), stored documents and computations under way, one per facts key.
    let facts: DerivedProductStore<ImageInfo>
    let counters: StatisticsCounters<WebImageManagerStatistics>
    let observerSlot = ObserverSlot()
    let backgroundWrites = BackgroundTasks()
    /// The disk write step of every path (pixels, variants, facts).
    var cacheWrites: CacheWriteStep { CacheWriteStep(backgroundWrites: backgroundWrites, observer: observerSlot) }
    let lifecycle = Mutex(Lifecycle.running)
    /// The memory tier when the cache is an ``ImageCache``: its hits skip every suspension.
    let imageCache: ImageCache?

    /// Bits of ``hotFlags``.
    enum HotFlag: UInt8 {
        case processesOptions = 1
        case shutDown = 2
        case observed = 4
    }

    /// Runs the manager's options processor on `options` and `context`, when one is set (checked on
    /// one relaxed load first: a manager without one pays nothing). Every product's request goes
    /// through here once, when it is prepared. Returns whether the processor ran.
    @discardableResult
    func processOptions(url: URL, _ options: inout WebImageOptions, _ context: inout WebImageContext) -> Bool {
        guard hotFlags.load(ordering: .relaxed) & HotFlag.processesOptions.rawValue != 0, let processor = config.optionsProcessor else {
            return false
        }
        processor(url, &options, &context)
        return true
    }

    func setHotFlag(_ flag: HotFlag, _ on: Bool) {
        if on {
            hotFlags.bitwiseOr(flag.rawValue, ordering: .relaxed)
        } else {
            hotFlags.bitwiseAnd(~flag.rawValue, ordering: .relaxed)
        }
    }

    /// Creates a manager of its own (not the shared one).
    /// - Parameters:
    ///   - cache: default ``ImageCache/shared``.
    ///   - loader: default ``LoadersManager/shared``.
    ///   - coders: default ``CoderRegistry/shared``.
    ///   - config: the options processor, download hook, blocklist duration and retry policy;
    ///     default `WebImageManagerConfig()`, whose defaults each property documents.
    public init(cache: any ImageCaching = ImageCache.shared, loader: any ImageLoader = LoadersManager.shared,
                coders: CoderRegistry = .shared, config: WebImageManagerConfig = WebImageManagerConfig()) {
        self.cache = cache
        self.loader = loader
        self.coders = coders
        settings = Mutex(config)
        imageCache = cache as? ImageCache ?? (cache as? any LayeredImageCaching)?.localCache
        let counters = StatisticsCounters.manager()
        self.counters = counters
        variants = DerivedProductStore(memory: MemoryCache(totalCostLimit: max(config.maxVariantMemoryCost, 0), keepsValuesInUse: false),
                                       keepsInMemory: config.maxVariantMemoryCost > 0,
                                       countingMemoryHit: { counters.addVariantMemoryHit() },
                                       countingStoredHit: { counters.add(\.variantDiskHits) },
                                       countingFill: { counters.add(\.sharedFills) })
        facts = DerivedProductStore(memory: MemoryCache(countLimit: Self.infoMemoryCountLimit, keepsValuesInUse: false),
                                    countingFill: { counters.add(\.sharedFills) })
        setHotFlag(.processesOptions, config.optionsProcessor != nil)
    }

    /// The configuration in force. Change it with ``updateConfig(_:)``.
    public var config: WebImageManagerConfig { settings.withLock { $0 } }

    /// Changes the configuration for loads that start from now on.
    public func updateConfig(_ change: (inout WebImageManagerConfig) -> Void) {
        let variantLimit = settings.withLock { config in
            change(&config)
            setHotFlag(.processesOptions, config.optionsProcessor != nil)
            return config.maxVariantMemoryCost
        }
        variants.setMemoryCostLimit(variantLimit)
    }

    /// Receives every load's ``ImageLoadReport`` and, set here, the events of this manager's cache
    /// (when it is an ``ImageCache`` or a ``LayeredImageCaching``) and downloader (a ``Downloader``, or those of a
    /// ``LoadersManager``) too; default `nil`. See ``WebImageObserver``.
    /// Observers added with ``addObserver(_:)`` stay when it changes.
    public var observer: (any WebImageObserver)? {
        get { observerSlot.current }
        set { changeObservers { $0.current = newValue } }
    }

    /// Adds an observer beside ``observer`` and any added before: each receives every event (an
    /// image server's metrics beside an app's logging). It stays until the returned registration's
    /// ``ObserverRegistration/cancel()``.
    public func addObserver(_ observer: any WebImageObserver) -> ObserverRegistration {
        var added: UInt64 = 0
        changeObservers { added = $0.add(observer) }
        let id = added
        return ObserverRegistration { [weak self] in self?.changeObservers { $0.remove(id) } }
    }

    /// Changes the observers; the hot flag, the cache's and the loader's observer follow (the cache
    /// and the loader get a forwarder to every observer of the manager, or none).
    private func changeObservers(_ change: (ObserverSlot) -> Void) {
        let observed = settings.withLock { _ in   // the slot and its flag change together
            change(observerSlot)
            setHotFlag(.observed, observerSlot.isObserved)
            return observerSlot.isObserved
        }
        let forwarder = observed ? observerSlot.forwarder : nil
        imageCache?.observer = forwarder
        (loader as? any ObservableLoader)?.setObserver(forwarder)
    }

    // MARK: Loading

    /// Loads the image at `url`: from memory, from disk, or from the network, in that order.
    ///
    /// - Parameters:
    ///   - url: what to load; `http`, `https`, `file` and `data` with the default loader.
    ///   - options: flags; default `[]`.
    ///   - context: per-load settings (transformer, thumbnail size, cache tiers...); default none.
    /// - Returns: the image, its bytes (when the load had them), and the tier it came from.
    /// - Throws: ``WebImageError``: `invalidURL` for a nil or empty URL, `blockedURL`, `notInCache`
    ///   (with ``WebImageOptions/fromCacheOnly``), `cancelled` at once when the calling task is
    ///   cancelled, `decodingFailed`, `transformFailed`, `unsupportedOption`, `cacheStoreFailed` (with
    ///   ``WebImageOptions/waitStoreCache``), or the loader's error (`badStatusCode`, `timedOut`...).
    public func loadImage(url: URL?, options: WebImageOptions = [], context: WebImageContext = WebImageContext())
        async throws -> ImageResult {
        try await load(url: url, options: options, context: context, events: nil)
    }

    /// Loads the image at a URL given as text; see ``loadImage(url:options:context:)``.
    /// - Throws: ``WebImageError/invalidURL(_:)`` when `string` is not a URL, and whatever the URL load throws.
    public func loadImage(url string: String, options: WebImageOptions = [], context: WebImageContext = WebImageContext())
        async throws -> ImageResult {
        guard let url = URL(string: string) else { throw WebImageError.invalidURL(string) }
        return try await load(url: url, options: options, context: context, events: nil)
    }

    /// Loads like ``loadImage(url:options:context:)`` and reports as it goes: progress, partial images
    /// (with ``WebImageOptions/progressiveLoad``, one partial decode at a time), the cached image first
    /// (with ``WebImageOptions/refreshCached``), then exactly one ``ImageLoadEvent/finished(_:)``, or
    /// the load's error thrown. Ending the iteration early or cancelling its task cancels the load.
    /// A slow consumer gets the latest progress and partial image, not every one.
    public func imageEvents(url: URL?, options: WebImageOptions = [], context: WebImageContext = WebImageContext())
        -> ImageEventStream {
        ImageEventStream { events in try await self.load(url: url, options: options, context: context, events: events) }
    }

    /// The key the image of `url` is cached under for `context`: the URL's `absoluteString` (or the
    /// ``WebImageContext/cacheKeyFilter``'s key), then `-Thumbnail(w,h,1)` for a thumbnail size (0 as
    /// the last number when the aspect ratio is not kept), then `-` and the transformer's key (unless empty), each
    /// inserted before the path's extension (`image.png` → `image-K.png`, query and fragment kept),
    /// then `-ColorProfile(source)` when `options` hold ``WebImageOptions/preserveColorProfile``
    /// (those pixels differ from the sRGB ones other loads get; the original's bytes are the same).
    /// `nil` when the key filter returns `nil` or an empty key: such a load is neither looked up in nor
    /// stored to any cache.
    /// - Parameter options: the load's options; default `[]`.
    public func cacheKey(for url: URL, context: WebImageContext = WebImageContext(), options: WebImageOptions = []) -> String? {
        cacheKey(for: url, absoluteString: url.absoluteString, context: context, options: options)
    }

    /// ``cacheKey(for:context:options:)`` with the URL's `absoluteString` already at hand (it is not free).
    private func cacheKey(for url: URL, absoluteString: String, context: WebImageContext, options: WebImageOptions) -> String? {
        imageKeys(for: url, absoluteString: absoluteString, context: context, options: options).key
    }

    /// `originalKey` with the context's thumbnail and transformer parts, and the colour part of
    /// `options`, inserted.
    static func derivedKey(from originalKey: String, context: WebImageContext, options: WebImageOptions) -> String {
        var key = originalKey
        if options.contains(.preserveColorProfile) { key = CacheKeys.inserting(CacheKeys.sourceColorPart, into: key) }
        if options.contains(.preserveHighBitDepth) { key = CacheKeys.inserting(CacheKeys.highBitDepthPart, into: key) }
        if !context.appliesOrientation { key = CacheKeys.inserting(CacheKeys.unorientedPart, into: key) }
        if let limits = context.limits { key = CacheKeys.inserting(CacheKeys.limitsPart(limits), into: key) }
        if let size = context.thumbnailPixelSize, size.width > 0, size.height > 0 {
            key = CacheKeys.inserting(CacheKeys.thumbnailPart(size, preservesAspectRatio: context.preservesAspectRatio,
                                                              coversBox: context.thumbnailCoversBox), into: key)
        }
        if let transformerKey = context.transformer?.key, !transformerKey.isEmpty {
            key = CacheKeys.inserting(transformerKey, into: key)
        }
        return key
    }

    /// The key of the full-size, untransformed image; `nil` when the key filter says "cache nothing".
    func originalCacheKey(for url: URL, absoluteString: String, context: WebImageContext) -> String? {
        guard let filter = context.cacheKeyFilter else { return absoluteString }
        guard let key = filter.cacheKey(for: url), !key.isEmpty else { return nil }
        return key
    }

    private func load(url: URL?, options: WebImageOptions, context: WebImageContext,
                      events: LoadCoalescer<ImageLoadPipeline.Outcome>.EventHandler?) async throws -> ImageResult {
        let absoluteString = url?.absoluteString ?? ""
        guard let url, !absoluteString.isEmpty else {
            counters.add(\.loads)
            counters.add(\.failures)
            throw WebImageError.invalidURL(url?.absoluteString)
        }
        let flags = hotFlags.load(ordering: .relaxed)
        if flags == 0, let image = memoryHit(url: url, options: options, context: context, key: {
            context.derivesCacheKey ? cacheKey(for: url, absoluteString: absoluteString, context: context, options: options) : absoluteString
        }) {
            counters.addMemoryHitLoad()
            return ImageResult(image: image, data: nil, cacheType: .memory, url: url)
        }
        let prepared = prepareLoad(url: url, absoluteString: absoluteString, options: options, context: context, processed: false,
                                   memoryLooked: flags == 0)
        return try await slowLoad(prepared, events: events).result
    }

    /// The pixels of a load whose options the manager's options processor has already seen (the
    /// variant pipeline's): the pipeline path without the processor and without the memory fast path
    /// (a variant miss has just looked). Throws what ``loadImage(url:options:context:)`` throws.
    /// - Parameter keys: the pixels' keys when the caller built them for these options and context.
    func loadPixels(url: URL, options: WebImageOptions, context: WebImageContext, keys: ImageKeys? = nil) async throws(WebImageError) -> Image {
        try await slowLoad(prepareLoad(url: url, absoluteString: url.absoluteString, options: options, context: context, processed: true,
                                       memoryLooked: false, keys: keys), events: nil).result.image
    }

    /// ``loadPixels(url:options:context:)`` with the original's encoded bytes beside the pixels when
    /// `wantsSource` says so for the image: the bytes the load had in hand, else the original's
    /// stored bytes (after the background writes under way, when a load that just finished is still
    /// writing them), else (a cache that keeps no bytes) `nil`. Image facts read the header from
    /// them; a vector source passed through is them.
    func loadPixelsAndSource(url: URL, options: WebImageOptions, context: WebImageContext, keys: ImageKeys? = nil,
                             wantsSource: (Image) -> Bool = { _ in true }) async throws(WebImageError) -> (image: Image, source: Data?) {
        let prepared = prepareLoad(url: url, absoluteString: url.absoluteString, options: options, context: context, processed: true,
                                   memoryLooked: false, keys: keys)
        let outcome = try await slowLoad(prepared, events: nil)
        let image = outcome.result.image
        guard wantsSource(image) else { return (image, nil) }
        if let data = outcome.originalData { return (image, data) }
        guard let key = prepared.originalKey else { return (image, nil) }
        let cache = context.originalCache ?? context.cache ?? self.cache
        if let stored = (try? await cache.cachedData(forKey: key)) ?? nil { return (image, stored.data) }
        await backgroundWrites.waitUntilIdle()
        return (image, ((try? await cache.cachedData(forKey: key)) ?? nil)?.data)
    }

    /// A load that is not a plain memory hit: counted, timed and reported to the observer. Kept out
    /// of ``load(url:options:context:events:)`` so that the memory-hit path stays small.
    func slowLoad(_ prepared: PreparedLoad,
                  events: LoadCoalescer<ImageLoadPipeline.Outcome>.EventHandler?) async throws(WebImageError) -> ImageLoadPipeline.Outcome {
        counters.add(\.loads)
        let started = ContinuousClock.now
        var report = ImageLoadReport(url: prepared.url, cacheKey: prepared.key, options: prepared.options, context: prepared.context,
                                     source: .none)
        do throws(WebImageError) {
            let outcome = try await pipelineResult(prepared, events: events, report: &report)
            report.source = outcome.source
            report.byteCount = outcome.byteCount
            report.durations = outcome.durations
            report.durations.total = .now - started
            if observerSlot.isObserved { let report = report; observerSlot.emit { .loadFinished(report) } }
            return outcome
        } catch {
            counters.add(\.failures)
            report.error = error
            report.durations.total = .now - started
            if observerSlot.isObserved { let report = report; observerSlot.emit { .loadFinished(report) } }
            throw error
        }
    }

    /// The hot path: a memory hit of the plain ``ImageCache`` needs no suspension, no lock but the
    /// memory tier's, and no pipeline. Returns the image alone: the caller builds the one result.
    private func memoryHit(url: URL, options: WebImageOptions, context: WebImageContext, key: () -> String?) -> Image? {
        guard let imageCache, !context.overridesCache, context.queryCacheType.includesMemory,
              options.isDisjoint(with: [.fromLoaderOnly, .refreshCached, .queryMemoryData, .allowInvalidSSLCertificates,
                                        .preserveColorProfile, .preserveHighBitDepth]),
              !Task.isCancelled, options.contains(.retryFailed) || !blocklist.contains(url),
              let key = key(),
              let image = imageCache.memoryHit(forKey: key)
        else { return nil }
        return image
    }

    /// Everything but the memory-hit fast path: the shutdown check, then the memory tier (when the
    /// fast path did not look) and the shared pipeline.
    private func pipelineResult(_ prepared: PreparedLoad, events: LoadCoalescer<ImageLoadPipeline.Outcome>.EventHandler?,
                                report: inout ImageLoadReport) async throws(WebImageError) -> ImageLoadPipeline.Outcome {
        let (url, options, context, key, originalKey) = (prepared.url, prepared.options, prepared.context, prepared.key, prepared.originalKey)
        if hotFlags.load(ordering: .relaxed) & HotFlag.shutDown.rawValue != 0 { throw .shutDown(url: url) }
        let config = self.config
        if Task.isCancelled { throw .cancelled(url: url) }
        if options.contains(.allowInvalidSSLCertificates) && url.scheme?.lowercased() == "https" {
            throw .unsupportedOption("allowInvalidSSLCertificates (URLSession on Linux verifies every certificate and cannot skip it per request; use a trusted certificate or an ImageLoader of your own)", url: url)
        }
        if !options.contains(.retryFailed) && blocklist.contains(url) { throw .blockedURL(url) }
        if !prepared.memoryLooked, let image = memoryHit(url: url, options: options, context: context, key: { key }) {
            counters.add(\.memoryHits)
            return ImageLoadPipeline.Outcome(result: ImageResult(image: image, data: nil, cacheType: .memory, url: url), source: .memory)
        }

        // Without a cache key the pipeline still names its result (the transformer sees the name) but caches nothing.
        let absoluteString = prepared.absoluteString
        let pipeline = ImageLoadPipeline(
            url: url, key: key ?? Self.derivedKey(from: absoluteString, context: context, options: options), originalKey: originalKey ?? absoluteString,
            cachesResults: originalKey != nil, options: options, context: context, cache: context.cache ?? cache,
            originalCache: context.originalCache ?? context.cache ?? cache, loader: context.loader ?? loader,
            coders: context.coders ?? coders, config: config, counters: counters, observer: observerSlot,
            backgroundWrites: backgroundWrites)
        let blocklist = self.blocklist
        let counters = self.counters
        let retriesFailed = options.contains(.retryFailed)
        let shareKey = context.isShareable ? Self.shareKey(key: key, url: url, options: options, context: context) : UUID().uuidString
        var joined = false
        defer { report.joinedLoadUnderWay = joined }
        let blocksFailures = context.limits == nil
        return try await coalescer.run(key: shareKey, cancellation: .cancelled(url: url), refusal: .shutDown(url: url), events: events,
                                       joined: { joined = $0; if $0 { counters.add(\.joins) } },
                                       executor: context.workExecutor) { (emit) async throws(WebImageError) in
            do throws(WebImageError) {
                let outcome = try await pipeline.run(emit: emit)
                if retriesFailed { blocklist.remove(url) }
                return outcome
            } catch {
                // A load under limits of its own fails for its limits, not for the URL: others may still load it.
                if error.blocksURL && blocksFailures { blocklist.insert(url, for: config.failedURLBlockDuration, failure: error) }
                throw error
            }
        }
    }

    /// What distinguishes loads that may share one result besides the cache key.
    /// A load without a cache key (its key filter said "cache nothing") shares only with loads of
    /// the same URL that cache nothing either.
    private static func shareKey(key: String?, url: URL, options: WebImageOptions, context: WebImageContext) -> String {
        var parts = [key ?? "\u{1}uncached " + url.absoluteString, String(options.resultAffecting.rawValue), "\(context.queryCacheType)", "\(context.storeCacheType)",
                     "\(context.originalQueryCacheType)", "\(context.originalStoreCacheType)",
                     context.scaleDownLimitBytes.map(String.init) ?? "", context.imageScaleFactor.map { "\($0)" } ?? ""]
        parts += context.httpHeaders.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return parts.joined(separator: "\u{0}")
    }

    // MARK: Control and introspection

    /// Cancels every load under way; each waiting caller gets ``WebImageError/cancelled(url:)``.
    public func cancelAll() {
        coalescer.cancelAll()
    }

    /// Whether any load is under way.
    public var isRunning: Bool { coalescer.isRunning }

    /// Counters since the manager was created.
    public var statistics: WebImageManagerStatistics { counters.snapshot }

    /// Whether `url` is on the failed-URL blocklist now.
    public func isFailedURL(_ url: URL) -> Bool {
        blocklist.contains(url)
    }

    /// The failure that put `url` on the failed-URL blocklist, while it is there; `nil` otherwise.
    /// What a server answers a blocked URL with: the status of its first failure, not a new one.
    public func failure(forFailedURL url: URL) -> WebImageError? {
        blocklist.failure(for: url)
    }

    /// Takes `url` off the failed-URL blocklist.
    public func removeFailedURL(_ url: URL) {
        blocklist.remove(url)
    }

    /// Empties the failed-URL blocklist.
    public func removeAllFailedURLs() {
        blocklist.removeAll()
    }

    /// The callers waiting on the shared load of `url` with `options` and `context`.
    func callerCount(url: URL, options: WebImageOptions = [], context: WebImageContext = WebImageContext()) -> Int {
        coalescer.callerCount(forKey: Self.shareKey(key: cacheKey(for: url, context: context, options: options), url: url, options: options, context: context))
    }
}
