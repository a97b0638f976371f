import Foundation
import Synchronization

/// A cache (an ``ImageCache``, or another layered cache) in front of a ``SharedCacheTier``:
/// memory → local disk → (tiers in front) → this tier → origin. The logic every shared tier needs,
/// written once; `RedisImageCache` and `S3ImageCache` are this class over their tiers.
///
/// - A **tier hit** is decoded from its bytes as a disk hit would be, and written into the inner
///   cache (its disk, and the tiers in front) **in the background**: it is not written and read
///   back. Bytes no coder reads are deleted from the tier and are a miss; bytes this process's own
///   limits refuse are a miss and stay.
/// - A **store** reaches the inner cache, then the tier: awaited, or in the background when the tier
///   says so (``SharedCacheTier/writesInBackground``); ``flush()`` waits for both kinds of write.
/// - **Fleet-wide single flight**: the tier's claims when it coordinates fills, else the inner cache's.
/// - **The tier failing never fails a call**: only the inner cache's own errors are thrown.
open class LayeredImageCache: LayeredImageCaching, SharedTierReporting, @unchecked Sendable {
    // @unchecked Sendable: every stored property is a `let` of a Sendable type; subclasses add `let`s only.

    /// The caches in front of the tier.
    public let inner: any ImageCaching
    /// The shared tier behind them.
    public let tier: any SharedCacheTier
    /// The process's own memory and disk tiers (the inner cache's).
    public let localCache: ImageCache
    /// Whether ``shutdown()`` closes ``tier``: only a tier this cache was made to own.
    private let ownsTier: Bool
    /// The tier's report name, read once: a hit's ``ImageCacheSource/sharedTier(_:)``.
    private let tierName: String
    private let writes = BackgroundTasks()
    private let localTime = Mutex(Duration.zero)

    /// Puts `tier` behind `inner`.
    /// - Parameters:
    ///   - inner: an ``ImageCache`` or a ``LayeredImageCaching`` over one.
    ///   - tier: the shared tier.
    ///   - ownsTier: whether ``shutdown()`` closes the tier (default `false`: another cache may share it).
    /// - Precondition: `inner` has local tiers (an ``ImageCache`` or a ``LayeredImageCaching``).
    public init(inner: any ImageCaching, tier: any SharedCacheTier, ownsTier: Bool = false) {
        guard let local = inner as? ImageCache ?? (inner as? any LayeredImageCaching)?.localCache else {
            preconditionFailure("LayeredImageCache needs an ImageCache or a LayeredImageCaching in front of its tier")
        }
        (self.inner, self.tier, self.localCache, self.ownsTier) = (inner, tier, local, ownsTier)
        tierName = tier.report.name
    }

    /// Looks in the inner cache, then (when `query` reaches the disk tier) in the tier; a tier hit is
    /// decoded here and promoted in the background (see the type).
    /// - Throws: the inner cache's errors; never the tier's.
    public func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? {
        if let hit = try await timed({ try await inner.query(forKey: key, query: query) }) { return hit }
        guard query.cacheType.includesDisk, !key.isEmpty, let entry = await tier.value(forKey: key) else { return nil }
        let image: Image
        do {
            image = try localCache.coders.decode(entry.data, options: query.decodeOptions)
        } catch ImageCodingError.imageTooLarge, ImageCodingError.animationTooLarge, ImageCodingError.insufficientMemory {
            return nil
        } catch {
            await tier.removeValue(forKey: key)
            return nil
        }
        promote(entry, forKey: key)
        if query.promotesToMemory && query.decodeOptions.decodesFullImage {
            try? await localCache.store(image, data: nil, forKey: key, cacheType: .memory, metadata: nil)
        }
        return ImageCacheResult(image: image, data: entry.data, cacheType: .disk, metadata: entry.metadata, source: .sharedTier(tierName))
    }

    /// Stores in the inner cache, then (for the disk tier) the bytes on disk (the original `data`, or
    /// what the local serializer makes) in the tier, ending this process's fill claim on `key`.
    /// - Throws: the inner cache's failure, after the tier's write (or its start) all the same.
    public func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws {
        var innerError: (any Error)?
        do {
            try await timed { try await inner.store(image, data: data, forKey: key, cacheType: cacheType, metadata: metadata) }
        } catch {
            innerError = error
        }
        if cacheType.includesDisk, !key.isEmpty {
            if let bytes = localCache.serializer.data(for: image, originalData: data, key: key) {
                await write(bytes, metadata: metadata, forKey: key)
            } else if tier.coordinatesFills {
                await tier.endFill(forKey: key)
            }
        }
        if let innerError { throw innerError }
    }

    /// Stores bytes in the inner cache, then in the tier, ending this process's fill claim on `key`.
    /// - Throws: the inner cache's failure, after the tier's write (or its start) all the same.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws {
        var innerError: (any Error)?
        do { try await timed { try await inner.storeData(data, forKey: key, metadata: metadata) } } catch { innerError = error }
        if !key.isEmpty { await write(data, metadata: metadata, forKey: key) }
        if let innerError { throw innerError }
    }

    /// The bytes under `key` from the inner cache, else from the tier (promoted in the background).
    /// - Throws: the inner cache's read error; never the tier's.
    public func cachedData(forKey key: String) async throws -> CachedData? {
        if let hit = try await timed({ try await inner.cachedData(forKey: key) }) { return hit }
        guard !key.isEmpty, var entry = await tier.value(forKey: key) else { return nil }
        promote(entry, forKey: key)
        entry.source = .sharedTier(tierName)
        return entry
    }

    /// Removes `key` from the inner tiers `cacheType` names, and from the tier when it names the disk.
    public func removeImage(forKey key: String, cacheType: ImageCacheType) async {
        await inner.removeImage(forKey: key, cacheType: cacheType)
        if cacheType.includesDisk { await tier.removeValue(forKey: key) }
    }

    /// The inner tier holding `key`, else ``ImageCacheType/disk`` when the tier has it, else `.none`.
    public func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType {
        let found = await inner.containsImage(forKey: key, cacheType: cacheType)
        guard found == .none, cacheType.includesDisk else { return found }
        return await tier.containsValue(forKey: key) ? .disk : .none
    }

    /// Clears the inner tiers `cacheType` names and, when it names the disk, this namespace in the tier.
    public func clear(_ cacheType: ImageCacheType) async {
        await inner.clear(cacheType)
        if cacheType.includesDisk { await tier.removeAll() }
    }

    /// Waits for the inner cache's background writes, and every promotion and background store started here.
    public func flush() async {
        await writes.waitUntilIdle()
        await inner.flush()
    }

    /// Runs the inner cache's background work and the tier's (sweeps) until the calling task is cancelled.
    public func run() async {
        let (inner, tier) = (self.inner, self.tier)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await inner.run() }
            group.addTask { await tier.run() }
            await group.waitForAll()
        }
    }

    /// Waits for the writes under way, shuts the inner cache down and, when this cache owns its
    /// tier, closes it: later reads and stores then work from the inner tiers alone.
    public func shutdown() async {
        await writes.waitUntilIdle()
        await inner.shutdown()
        if ownsTier { tier.close() }
    }

    /// The tier's claim on `key` when it coordinates fills (another process's bytes are promoted),
    /// else the inner cache's.
    public func beginFill(forKey key: String) async -> CachedData? {
        guard tier.coordinatesFills else { return await inner.beginFill(forKey: key) }
        guard !key.isEmpty, var entry = await tier.beginFill(forKey: key) else { return nil }
        promote(entry, forKey: key)
        entry.source = .sharedTier(tierName)
        return entry
    }

    /// Ends the claim ``beginFill(forKey:)`` made.
    public func abandonFill(forKey key: String) async {
        if tier.coordinatesFills { await tier.endFill(forKey: key) } else { await inner.abandonFill(forKey: key) }
    }

    /// The tier's report.
    public var sharedTierReport: SharedTierReport { tier.report }

    /// The shared tiers in front (Redis before an object store), then this one.
    public var sharedTierReports: [SharedTierReport] {
        ((inner as? any SharedTierReporting)?.sharedTierReports ?? []) + [tier.report]
    }

    /// Time spent in the inner cache's lookups and stores, in total (the tier's is in its report and statistics).
    public var localTimeSpent: Duration { localTime.withLock { $0 } }

    /// The tier's bytes written into the inner cache (its disk, the tiers in front), in the background.
    private func promote(_ entry: CachedData, forKey key: String) {
        let inner = self.inner
        writes.start { try? await inner.storeData(entry.data, forKey: key, metadata: entry.metadata) }
    }

    /// `data` into the tier: awaited, or in the background when the tier writes so.
    private func write(_ data: Data, metadata: DiskCacheMetadata?, forKey key: String) async {
        let tier = self.tier
        if tier.writesInBackground {
            writes.start { await tier.setValue(data, metadata: metadata, forKey: key) }
        } else {
            await tier.setValue(data, metadata: metadata, forKey: key)
        }
    }

    private func timed<Result>(_ body: () async throws -> Result) async rethrows -> Result {
        let started = ContinuousClock.now
        defer { let elapsed = ContinuousClock.now - started; localTime.withLock { $0 += elapsed } }
        return try await body()
    }
}
