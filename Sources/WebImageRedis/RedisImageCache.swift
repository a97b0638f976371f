import Foundation
import Synchronization
import WebImage

/// A process's ``ImageCache`` (pixels in memory, bytes on disk) in front of a fleet's ``RedisTier``
/// (bytes in Redis): memory → local disk → Redis → origin.
///
/// - A **Redis hit** is promoted into the local tiers (its bytes on disk, the decoded image in
///   memory as a disk hit would be) and reported as ``ImageCacheType/disk``.
/// - A **store** reaches the local tiers and then Redis. ``WebImageManager`` makes disk stores in
///   the background unless ``WebImageOptions/waitStoreCache``, so a load never waits for Redis.
/// - **Fleet-wide single flight**: ``beginFill(forKey:)`` claims a key missing everywhere, or waits
///   for the process that claimed it (see ``RedisTier``).
/// - **Redis failing never fails a call**: reads miss, writes stay local; ``RedisTier/statistics``
///   counts it. Only the local tiers' own failures are thrown, as ``ImageCache`` throws them.
///
/// Give it to ``WebImageManager/init(cache:loader:coders:config:)``; the manager answers memory
/// hits from ``localCache`` directly, as it does for a plain ``ImageCache``.
public final class RedisImageCache: LayeredImageCaching {
    /// The process's memory and disk tiers, searched first.
    public let localCache: ImageCache
    /// The shared tier behind them.
    public let shared: RedisTier
    private let localTime = Mutex(Duration.zero)

    /// Puts `shared` behind `local`. Never throws or blocks (Redis is reached on first use).
    public convenience init(local: ImageCache, shared: RedisTier) {
        self.init(local: local, shared: shared, ownsTier: false)
    }

    private init(local: ImageCache, shared: RedisTier, ownsTier: Bool) {
        localCache = local
        self.shared = shared
        self.ownsTier = ownsTier
    }

    /// Whether ``shutdown()`` closes ``shared``: only a tier this cache created (another cache may
    /// share one given to it).
    private let ownsTier: Bool

    /// Creates the local cache and the tier in one call.
    /// - Parameters:
    ///   - local: the process's cache; default a new ``ImageCache`` in namespace `default`.
    ///   - redis: the servers, namespace, limits and timeouts (``RedisTierConfig``).
    public convenience init(local: ImageCache = ImageCache(namespace: "default"), redis: RedisTierConfig) {
        self.init(local: local, shared: RedisTier(config: redis), ownsTier: true)
    }

    /// Looks in the local tiers, then (when `query` reaches the disk tier) in Redis; a Redis hit is
    /// stored on the local disk and decoded as a local disk hit is. Undecodable bytes from Redis are
    /// deleted there and are a miss.
    /// - Throws: the local tiers' errors (``DiskCacheError/readFailed(path:errno:)``); never Redis's.
    public func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? {
        if let hit = try await timed({ try await localCache.query(forKey: key, query: query) }) { return hit }
        guard query.cacheType.includesDisk, !key.isEmpty, let entry = await shared.value(forKey: key) else { return nil }
        if localCache.diskCache != nil {
            try? await localCache.storeData(entry.data, forKey: key, metadata: entry.metadata)
            if var hit = try? await localCache.query(forKey: key, query: query) {
                hit.isFromSharedTier = true
                return hit
            }
        }
        // The local tiers could not keep or read it (no disk tier, a full disk, an entry evicted at
        // once): decode it here. Only bytes no coder reads are deleted from Redis, never bytes this
        // process's own limits refuse.
        do {
            let image = try localCache.coders.decode(entry.data, options: query.decodeOptions)
            if query.promotesToMemory && query.decodeOptions.decodesFullImage {
                try? await localCache.store(image, data: nil, forKey: key, cacheType: .memory, metadata: nil)
            }
            return ImageCacheResult(image: image, data: entry.data, cacheType: .disk, metadata: entry.metadata, isFromSharedTier: true)
        } catch ImageCodingError.imageTooLarge, ImageCodingError.animationTooLarge, ImageCodingError.insufficientMemory {
            return nil
        } catch {
            await shared.removeValue(forKey: key)
            return nil
        }
    }

    /// Stores in the local tiers, then the bytes on disk (the original `data`, or what the local
    /// cache's serializer makes) in Redis, ending this process's fill claim on `key`.
    /// - Throws: the local disk tier's failure (``DiskCacheError/writeFailed(path:errno:)``), after
    ///   Redis has been written all the same; never Redis's.
    public func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws {
        var localError: (any Error)?
        do {
            try await timed { try await localCache.store(image, data: data, forKey: key, cacheType: cacheType, metadata: metadata) }
        } catch {
            localError = error
        }
        if cacheType.includesDisk, !key.isEmpty {
            if let bytes = localCache.serializer.data(for: image, originalData: data, key: key) {
                await shared.setValue(bytes, metadata: metadata, forKey: key)
            } else {
                await shared.endFill(forKey: key)
            }
        }
        if let localError { throw localError }
    }

    /// Stores bytes on the local disk and in Redis, ending this process's fill claim on `key`.
    /// - Throws: the local disk tier's failure, after Redis has been written all the same.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws {
        var localError: (any Error)?
        do { try await timed { try await localCache.storeData(data, forKey: key, metadata: metadata) } } catch { localError = error }
        if !key.isEmpty { await shared.setValue(data, metadata: metadata, forKey: key) }
        if let localError { throw localError }
    }

    /// The bytes under `key` from the local disk, else from Redis (then stored on the local disk).
    /// - Throws: the local disk tier's read error; never Redis's.
    public func cachedData(forKey key: String) async throws -> CachedData? {
        if let hit = try await timed({ try await localCache.cachedData(forKey: key) }) { return hit }
        guard !key.isEmpty, var entry = await shared.value(forKey: key) else { return nil }
        try? await localCache.storeData(entry.data, forKey: key, metadata: entry.metadata)
        entry.isFromSharedTier = true
        return entry
    }

    /// Removes `key` from the local tiers `cacheType` names, and from Redis when it names the disk.
    public func removeImage(forKey key: String, cacheType: ImageCacheType) async {
        await localCache.removeImage(forKey: key, cacheType: cacheType)
        if cacheType.includesDisk { await shared.removeValue(forKey: key) }
    }

    /// The local tier holding `key`, else ``ImageCacheType/disk`` when Redis has it, else `.none`.
    public func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType {
        let local = await localCache.containsImage(forKey: key, cacheType: cacheType)
        guard local == .none, cacheType.includesDisk else { return local }
        return await shared.containsValue(forKey: key) ? .disk : .none
    }

    /// Clears the local tiers `cacheType` names and, when it names the disk, this namespace in Redis.
    public func clear(_ cacheType: ImageCacheType) async {
        await localCache.clear(cacheType)
        if cacheType.includesDisk { await shared.removeAll() }
    }

    /// Waits for the local cache's background writes.
    public func flush() async {
        await localCache.flush()
    }

    /// Runs the local cache's sweeps until the calling task is cancelled.
    public func run() async {
        await localCache.run()
    }

    /// Shuts the local cache down and, when this cache created its tier
    /// (``init(local:redis:)``), closes the Redis connections: later reads and stores then work from
    /// the local tiers alone. A tier given to ``init(local:shared:)`` stays open for its other users.
    public func shutdown() async {
        await localCache.shutdown()
        if ownsTier { shared.close() }
    }

    /// Claims `key` for this process in Redis, or waits for the process that holds it and returns
    /// its bytes, stored on the local disk first (see ``RedisTier/beginFill(forKey:)``).
    public func beginFill(forKey key: String) async -> CachedData? {
        guard !key.isEmpty, var entry = await shared.beginFill(forKey: key) else { return nil }
        try? await localCache.storeData(entry.data, forKey: key, metadata: entry.metadata)
        entry.isFromSharedTier = true
        return entry
    }

    /// Ends this process's claim on `key` in Redis.
    public func abandonFill(forKey key: String) async {
        await shared.endFill(forKey: key)
    }

    /// Time spent in the local tiers' lookups and stores, in total (Redis's is
    /// ``RedisTierStatistics/timeSpent``; hits and misses are each tier's statistics).
    public var localTimeSpent: Duration { localTime.withLock { $0 } }

    private func timed<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        let started = ContinuousClock.now
        defer { let elapsed = ContinuousClock.now - started; localTime.withLock { $0 += elapsed } }
        return try await body()
    }
}
