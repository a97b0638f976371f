import Foundation
import Synchronization

/// The two-tier image cache: decoded images in an LRU ``MemoryCache``, encoded bytes in a ``DiskCache``.
///
/// A query looks in memory (synchronous, O(1)), then on disk; a disk hit is decoded off any actor
/// and promoted into memory. A store puts the image in memory at once and the bytes on disk (awaited
/// by ``store(_:data:forKey:cacheType:metadata:)``, or in the background with
/// ``storeInBackground(_:data:forKey:cacheType:metadata:)``, which ``flush()`` waits for).
///
/// A lock-based class: the memory tier is a ``MemoryCache`` (one `Mutex`), the disk tier a
/// ``DiskCache`` (an actor: its index and files are its isolated state), counters and the
/// observer sit behind locks of their own. All methods may be called from any task.
public final class ImageCache: ImageCaching {
    /// The cache ``WebImageManager/shared`` uses: namespace `default` under the default base folder.
    /// If that folder cannot be created, the disk tier is off and the memory tier still works.
    public static let shared = ImageCache(namespace: "default")

    /// The limits and behaviour this cache was created with.
    public let config: ImageCacheConfig
    /// The memory tier.
    public let memoryCache: MemoryCache<String, Image>
    /// The disk tier, or `nil` when its directory could not be opened (see ``diskError``).
    public let diskCache: DiskCache?
    /// Why the disk tier is off, when it is.
    public let diskError: DiskCacheError?
    /// Decides the bytes stored on disk; default ``DefaultCacheSerializer``.
    public let serializer: any CacheSerializer
    /// The coders used to decode disk hits; default ``CoderRegistry/shared``.
    public let coders: CoderRegistry

    private let counters = StatisticsCounters.imageCache()
    private let observerSlot = ObserverSlot()
    /// The disk writes of ``storeInBackground(_:data:forKey:cacheType:metadata:)``, for ``flush()``.
    private let backgroundStores = BackgroundTasks()
    private let shutDown = Atomic<Bool>(false)

    /// Creates a cache whose disk tier is the namespace's folder under the configured base folder.
    ///
    /// - Parameters:
    ///   - namespace: the disk folder's name; default `"default"`.
    ///   - config: limits and folders; default ``ImageCacheConfig/init(maxMemoryCost:maxMemoryCount:memoryTimeToLive:shouldCacheImagesInMemory:shouldUseWeakMemoryCache:maxDiskAge:maxDiskSize:diskExpireType:diskWriteDurability:diskSweepInterval:diskCacheDirectory:additionalReadPaths:)``.
    ///   - serializer: decides stored bytes; default ``DefaultCacheSerializer``.
    ///   - coders: decode disk hits; default ``CoderRegistry/shared``.
    ///
    /// Never throws: if the disk folder cannot be used, ``diskCache`` is `nil`, ``diskError`` says
    /// why, and the cache works from memory.
    public convenience init(namespace: String = "default", config: ImageCacheConfig = ImageCacheConfig(),
                            serializer: any CacheSerializer = DefaultCacheSerializer(), coders: CoderRegistry = .shared) {
        let base = config.diskCacheDirectory ?? ImageCacheConfig.defaultDiskCacheDirectory
        self.init(directory: base.appendingPathComponent(namespace, isDirectory: true), config: config,
                  serializer: serializer, coders: coders)
    }

    /// Creates a cache whose disk tier is exactly `directory` (see the other initializer for the rest).
    public init(directory: URL, config: ImageCacheConfig = ImageCacheConfig(),
                serializer: any CacheSerializer = DefaultCacheSerializer(), coders: CoderRegistry = .shared) {
        self.config = config
        memoryCache = MemoryCache(totalCostLimit: config.maxMemoryCost, countLimit: config.maxMemoryCount,
                                  keepsValuesInUse: config.shouldUseWeakMemoryCache)
        do {
            diskCache = try DiskCache(directory: directory, config: config)
            diskError = nil
        } catch {
            diskCache = nil
            diskError = error
        }
        self.serializer = serializer
        self.coders = coders
    }

    // MARK: ImageCaching

    /// Looks in memory, then on disk (per `query.cacheType`), decoding a disk hit with
    /// `query.decodeOptions`. The hit is promoted into memory only when `query.promotesToMemory` is
    /// true *and* the decode gave the stored image itself (``DecodeOptions/decodesFullImage``): a
    /// thumbnail or scaled-down decode is returned but never cached under the key of the full image.
    /// A disk file that fails to decode is removed and is a miss. An empty key is a miss.
    /// - Throws: ``DiskCacheError/readFailed(path:errno:)`` when a disk entry exists but cannot be read.
    public func query(forKey key: String, query: ImageCacheQuery = ImageCacheQuery()) async throws -> ImageCacheResult? {
        guard !key.isEmpty else {
            counters.add(\.misses)
            return nil
        }
        if query.cacheType.includesMemory, let image = memoryCache.value(forKey: key) {
            counters.addMemoryHit()
            var result = ImageCacheResult(image: image, data: nil, cacheType: .memory)
            if query.includesData, let diskCache { result.data = try await diskCache.data(forKey: key) }
            return result
        }
        guard query.cacheType.includesDisk, let diskCache, let data = try await diskCache.data(forKey: key) else {
            counters.add(\.misses)
            return nil
        }
        let image: Image
        do {
            image = try coders.decode(data, options: query.decodeOptions)
        } catch {
            await diskCache.remove(forKey: key)
            counters.add(\.corruptFilesRemoved)
            counters.add(\.misses)
            return nil
        }
        counters.add(\.diskHits)
        if query.promotesToMemory && query.decodeOptions.decodesFullImage && config.shouldCacheImagesInMemory {
            storeInMemory(image, forKey: key)
        }
        let metadata = query.includesMetadata ? await diskCache.metadata(forKey: key) : nil
        return ImageCacheResult(image: image, data: data, cacheType: .disk, metadata: metadata)
    }

    /// Stores `image` in memory at once and its bytes on disk (the original `data`, or what the
    /// ``serializer`` makes of the image), returning after the disk write. An empty key is no key:
    /// nothing is stored.
    /// - Throws: ``DiskCacheError/writeFailed(path:errno:)`` (a full or read-only disk); the memory
    ///   tier keeps the image regardless.
    public func store(_ image: Image, data: Data? = nil, forKey key: String, cacheType: ImageCacheType = .all,
                      metadata: DiskCacheMetadata? = nil) async throws {
        guard !key.isEmpty else { return }
        if cacheType.includesMemory && config.shouldCacheImagesInMemory {
            storeInMemory(image, forKey: key)
        }
        guard cacheType.includesDisk, let diskCache else { return }
        guard let bytes = serializer.data(for: image, originalData: data, key: key) else { return }
        try await diskCache.store(bytes, forKey: key, metadata: metadata)
        counters.add(\.bytesWritten, bytes.count)
    }

    /// Stores like ``store(_:data:forKey:cacheType:metadata:)`` but returns at once, after the memory
    /// store; the disk write continues in a task the caller may await.
    @discardableResult
    public func storeInBackground(_ image: Image, data: Data? = nil, forKey key: String, cacheType: ImageCacheType = .all,
                                  metadata: DiskCacheMetadata? = nil) -> Task<Void, any Error> {
        if cacheType.includesMemory && config.shouldCacheImagesInMemory && !key.isEmpty {
            storeInMemory(image, forKey: key)
        }
        let diskOnly: ImageCacheType = cacheType.includesDisk ? .disk : .none
        let task = Task { try await self.store(image, data: data, forKey: key, cacheType: diskOnly, metadata: metadata) }
        backgroundStores.start { [observerSlot] in
            if case .failure(let error) = await task.result, let error = error as? DiskCacheError {
                observerSlot.emit { .diskWriteFailed(key: key, error: error) }
            }
        }
        return task
    }

    /// The disk tier's bytes for `key` and their metadata, without decoding; `nil` on a miss or
    /// without a disk tier. A hit records its access time, as a query does.
    /// - Throws: ``DiskCacheError/readFailed(path:errno:)`` when the entry exists but cannot be read.
    public func cachedData(forKey key: String) async throws -> CachedData? {
        guard let diskCache else { return nil }
        if let hit = try diskCache.readWithoutWaiting(forKey: key) { return CachedData(data: hit.data, metadata: hit.metadata) }
        guard !config.additionalReadPaths.isEmpty, let hit = try await diskCache.dataAndMetadata(forKey: key) else { return nil }
        return CachedData(data: hit.data, metadata: hit.metadata)
    }

    /// Stores bytes on disk only, without decoding (the downloader's raw response).
    /// - Throws: ``DiskCacheError/writeFailed(path:errno:)``.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata? = nil) async throws {
        guard let diskCache else { return }
        try await diskCache.store(data, forKey: key, metadata: metadata)
        counters.add(\.bytesWritten, data.count)
    }

    /// Removes `key` from the tiers `cacheType` names (default both).
    public func removeImage(forKey key: String, cacheType: ImageCacheType = .all) async {
        if cacheType.includesMemory { memoryCache.removeValue(forKey: key) }
        if cacheType.includesDisk { await diskCache?.remove(forKey: key) }
    }

    /// The tier holding `key` (memory first), or ``ImageCacheType/none``; never decodes or reads.
    public func containsImage(forKey key: String, cacheType: ImageCacheType = .all) async -> ImageCacheType {
        if cacheType.includesMemory && memoryCache.contains(key) { return .memory }
        if cacheType.includesDisk, let diskCache, await diskCache.contains(key) { return .disk }
        return .none
    }

    /// Empties the tiers `cacheType` names: clearing memory keeps the disk and the other way round.
    public func clear(_ cacheType: ImageCacheType = .all) async {
        if cacheType.includesMemory { memoryCache.removeAll() }
        if cacheType.includesDisk { await diskCache?.removeAll() }
    }

    // MARK: Conveniences

    /// The image for `key` in memory, or `nil` (synchronous; no disk access).
    public func imageFromMemory(forKey key: String) -> Image? {
        memoryCache.value(forKey: key)
    }

    /// A memory-tier query that counts in ``statistics`` like ``query(forKey:query:)``, without
    /// suspending: ``WebImageManager``'s fast path. A miss is not counted (the full query follows).
    func memoryHit(forKey key: String) -> Image? {
        guard let image = memoryCache.value(forKey: key) else { return nil }
        counters.addMemoryHit()
        return image
    }

    /// Whether the disk tier has an entry for `key` (from its index; no system call).
    public func diskImageExists(forKey key: String) async -> Bool {
        await diskCache?.contains(key) ?? false
    }

    /// The file the disk tier uses (or would use) for `key`; `nil` when the disk tier is off.
    public func cachePath(forKey key: String) -> String? {
        diskCache?.path(forKey: key)
    }

    /// The bytes the disk tier occupies (0 when it is off).
    public func diskSize() async -> Int { await diskCache?.totalSize() ?? 0 }

    /// The number of disk entries (0 when the disk tier is off).
    public func diskCount() async -> Int { await diskCache?.count() ?? 0 }

    /// Runs a disk sweep now (expired entries, then the size limit); `nil` when the disk tier is off.
    @discardableResult
    public func removeExpiredData() async -> DiskCacheSweepReport? {
        await diskCache?.removeExpiredData()
    }

    /// Frees memory: evicts every entry of the memory tier (images still referenced elsewhere stay
    /// reachable through its weak in-use table, so an image being served is never decoded twice) and
    /// drains the pool of spare pixel buffers. Call it when the process nears its memory limit, or
    /// let ``MemoryPressureMonitor`` call it. ``clear(_:)`` is the call that forgets everything.
    public func handleMemoryPressure() {
        let evicted = memoryCache.trimCountingEvictions(toCount: 0)
        PixelBufferPool.shared.drain()
        if evicted.count > 0 { observerSlot.emit { .memoryEvicted(count: evicted.count, cost: evicted.cost) } }
    }

    // MARK: Lifecycle and observation

    /// Receives this cache's events: memory evictions, disk sweeps, failed background writes;
    /// default `nil`. ``WebImageManager/observer`` sets it for the manager's cache.
    public var observer: (any WebImageObserver)? {
        get { observerSlot.current }
        set {
            observerSlot.current = newValue
            diskCache?.observerSlot.current = newValue
        }
    }

    /// Returns once every disk write started by ``storeInBackground(_:data:forKey:cacheType:metadata:)``
    /// has ended (written, or failed). Writes started while it waits are waited for too.
    public func flush() async {
        await backgroundStores.waitUntilIdle()
    }

    /// Runs the disk tier's sweeps (every ``ImageCacheConfig/diskSweepInterval``) in the calling task
    /// instead of in a task of the cache's own, and returns when that task is cancelled; sweeping
    /// stops then. Without a disk tier or an interval, it only waits for cancellation.
    public func run() async {
        guard let diskCache else { return await waitForCancellation() }
        await diskCache.runSweeps()
    }

    /// Flushes (``flush()``), stops the disk tier's sweep timer and every ``MemoryPressureMonitor``
    /// watching this cache. Queries and stores still work afterwards (a store is then written
    /// before it returns, or in a task nobody flushes). Safe to call more than once.
    public func shutdown() async {
        shutDown.store(true, ordering: .relaxed)
        await flush()
        await diskCache?.stopSweeping()
    }

    /// Whether ``shutdown()`` was called (monitors stop when they see it).
    var isShutDown: Bool { shutDown.load(ordering: .relaxed) }

    /// Counters since the cache was created.
    public var statistics: ImageCacheStatistics {
        var statistics = counters.snapshot
        statistics.memoryEvictions = memoryCache.evictionCount
        return statistics
    }

    private func storeInMemory(_ image: Image, forKey key: String) {
        guard observerSlot.isObserved else {
            memoryCache.setValue(image, forKey: key, cost: image.cost, timeToLive: config.memoryTimeToLive)
            return
        }
        let evicted = memoryCache.setValueCountingEvictions(image, forKey: key, cost: image.cost, timeToLive: config.memoryTimeToLive)
        if evicted.count > 0 { observerSlot.emit { .memoryEvicted(count: evicted.count, cost: evicted.cost) } }
    }
}
