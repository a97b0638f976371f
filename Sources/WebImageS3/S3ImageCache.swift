import Foundation
import WebImage

/// A process's cache (an ``ImageCache``, or a ``LayeredImageCaching`` such as a Redis tier in front)
/// in front of a durable ``S3Tier``: memory → local disk → (Redis) → object store → origin.
///
/// - A **hit in the store** (one GET) is promoted into the faster tiers: stored through the inner
///   cache (its disk, and Redis when it has one), then answered as a disk hit of the inner cache.
/// - A **store** reaches the inner cache, then the object store **in the background**: a load never
///   waits for a PUT; ``flush()`` and ``shutdown()`` wait for them.
/// - **Fleet-wide single flight** is the inner cache's (``beginFill(forKey:)``): with Redis in
///   front, one process of the fleet fetches a key from the origin and fills the store.
/// - **Failure is slower, never an error**: a down, slow or refusing store is a miss (bounded by the
///   client's time-outs, retried, then skipped by its breaker); only the inner cache's own errors
///   are thrown.
///
/// Give it to ``WebImageManager/init(cache:loader:coders:config:)``.
public final class S3ImageCache: LayeredImageCaching {
    /// The tiers in front of the store.
    public let inner: any ImageCaching
    /// The durable tier behind them.
    public let store: S3Tier
    /// The process's own memory and disk tiers (the inner cache's).
    public let localCache: ImageCache
    private let writes = BackgroundTasks()

    /// Puts `store` behind `inner` (an ``ImageCache`` or a ``LayeredImageCaching`` over one).
    /// - Precondition: `inner` is one of those (another cache has no local tiers to name).
    public init(inner: any ImageCaching, store: S3Tier) {
        self.inner = inner
        self.store = store
        guard let local = inner as? ImageCache ?? (inner as? any LayeredImageCaching)?.localCache else {
            preconditionFailure("S3ImageCache needs an ImageCache or a LayeredImageCaching in front of the store")
        }
        localCache = local
    }

    /// Looks in the inner cache, then (when `query` reaches the disk tier) in the store; a store hit
    /// is stored through the inner cache and decoded as its disk hit. Bytes no coder reads are
    /// deleted from the store and are a miss.
    /// - Throws: the inner cache's errors; never the store's.
    public func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? {
        if let hit = try await inner.query(forKey: key, query: query) { return hit }
        guard query.cacheType.includesDisk, !key.isEmpty, let entry = await store.value(forKey: key) else { return nil }
        if localCache.diskCache != nil {
            try? await inner.storeData(entry.data, forKey: key, metadata: entry.metadata)
            if var hit = try? await inner.query(forKey: key, query: query) {
                hit.isFromSharedTier = true
                return hit
            }
        }
        do {
            let image = try localCache.coders.decode(entry.data, options: query.decodeOptions)
            return ImageCacheResult(image: image, data: entry.data, cacheType: .disk, metadata: entry.metadata, isFromSharedTier: true)
        } catch ImageCodingError.imageTooLarge, ImageCodingError.animationTooLarge, ImageCodingError.insufficientMemory {
            return nil
        } catch {
            await store.removeValue(forKey: key)
            return nil
        }
    }

    /// Stores in the inner cache, then (for the disk tier) the bytes in the store, in the background.
    /// - Throws: the inner cache's failure, after the store's write has been started all the same.
    public func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws {
        var innerError: (any Error)?
        do { try await inner.store(image, data: data, forKey: key, cacheType: cacheType, metadata: metadata) } catch { innerError = error }
        if cacheType.includesDisk, !key.isEmpty, let bytes = localCache.serializer.data(for: image, originalData: data, key: key) {
            write(bytes, metadata: metadata, forKey: key)
        }
        if let innerError { throw innerError }
    }

    /// Stores bytes in the inner cache, then in the store in the background.
    /// - Throws: the inner cache's failure, after the store's write has been started all the same.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws {
        var innerError: (any Error)?
        do { try await inner.storeData(data, forKey: key, metadata: metadata) } catch { innerError = error }
        if !key.isEmpty { write(data, metadata: metadata, forKey: key) }
        if let innerError { throw innerError }
    }

    private func write(_ data: Data, metadata: DiskCacheMetadata?, forKey key: String) {
        let store = self.store
        writes.start { await store.setValue(data, metadata: metadata, forKey: key) }
    }

    /// The bytes under `key` from the inner cache, else from the store (then stored through the inner cache).
    /// - Throws: the inner cache's read error; never the store's.
    public func cachedData(forKey key: String) async throws -> CachedData? {
        if let hit = try await inner.cachedData(forKey: key) { return hit }
        guard !key.isEmpty, let entry = await store.value(forKey: key) else { return nil }
        try? await inner.storeData(entry.data, forKey: key, metadata: entry.metadata)
        return entry
    }

    /// Removes `key` from the inner tiers `cacheType` names, and from the store when it names the disk.
    public func removeImage(forKey key: String, cacheType: ImageCacheType) async {
        await inner.removeImage(forKey: key, cacheType: cacheType)
        if cacheType.includesDisk { await store.removeValue(forKey: key) }
    }

    /// The inner tier holding `key`, else ``ImageCacheType/disk`` when the store has a live entry.
    public func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType {
        let found = await inner.containsImage(forKey: key, cacheType: cacheType)
        guard found == .none, cacheType.includesDisk else { return found }
        return await store.containsValue(forKey: key) ? .disk : .none
    }

    /// Clears the inner tiers `cacheType` names and, when it names the disk, this namespace in the store.
    public func clear(_ cacheType: ImageCacheType) async {
        await inner.clear(cacheType)
        if cacheType.includesDisk { await store.removeAll() }
    }

    /// Waits for the inner cache's background writes and every PUT started here.
    public func flush() async {
        await inner.flush()
        await writes.waitUntilIdle()
    }

    /// Runs the inner cache's sweeps and, every ``S3TierConfig/sweepInterval``, the store's
    /// (``S3Tier/removeExpired()``), until the calling task is cancelled.
    public func run() async {
        let store = self.store
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.inner.run() }
            if let interval = store.config.sweepInterval {
                group.addTask {
                    while (try? await Task.sleep(for: interval)) != nil { await store.removeExpired() }
                }
            }
            await group.waitForAll()
        }
    }

    /// Waits for the PUTs under way, then shuts the inner cache down.
    public func shutdown() async {
        await writes.waitUntilIdle()
        await inner.shutdown()
    }

    /// The inner cache's claim on `key` (with Redis: one process of the fleet fetches it), or the
    /// bytes another process filled meanwhile.
    public func beginFill(forKey key: String) async -> CachedData? {
        await inner.beginFill(forKey: key)
    }

    /// Ends the inner cache's claim on `key`.
    public func abandonFill(forKey key: String) async {
        await inner.abandonFill(forKey: key)
    }
}

extension S3ImageCache: SharedTierReporting {
    /// The object store's counters for `/metrics` (`tier="s3"`): hits, misses (expired hits among
    /// them), errors, one node, and whether its breaker is open.
    public var sharedTierReport: SharedTierReport {
        let statistics = store.statistics
        var report = SharedTierReport(name: "s3")
        report.hits = statistics.hits
        report.misses = statistics.misses + statistics.expiredHits
        report.errors = statistics.errors
        report.nodes = 1
        report.openBreakers = statistics.isSkippingStore ? 1 : 0
        report.breakerOpenings = statistics.breakerOpenings
        return report
    }

    /// The inner cache's shared tiers (Redis), then the object store.
    public var sharedTierReports: [SharedTierReport] {
        ((inner as? any SharedTierReporting)?.sharedTierReports ?? []) + [sharedTierReport]
    }
}
