import Foundation

/// What ``WebImageManager`` needs of a cache, so that any store (a shared Redis or S3 tier, a
/// composition of several caches) can take the place of ``ImageCache``.
public protocol ImageCaching: Sendable {
    /// Looks up `key` in the tiers `query` names and returns the first hit, or `nil`.
    /// - Throws: errors the cache cannot treat as a miss (an unreadable disk).
    func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult?

    /// Stores `image` (and its encoded `data`, if known) under `key` in the tiers `cacheType` names,
    /// returning once every tier has it.
    /// - Throws: a tier's failure (a full disk); tiers that succeeded keep the image.
    func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws

    /// Stores encoded bytes under `key` on disk only, without keeping a decoded image in memory
    /// (the original of a thumbnail or transformed load, a prefetch that does not decode).
    /// - Throws: the disk tier's failure.
    func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws

    /// Removes `key` from the tiers `cacheType` names.
    func removeImage(forKey key: String, cacheType: ImageCacheType) async

    /// The tier that holds `key` (memory first), or ``ImageCacheType/none``, without decoding.
    func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType

    /// Removes everything from the tiers `cacheType` names.
    func clear(_ cacheType: ImageCacheType) async

    /// The bytes stored under `key` and their metadata, read without decoding (encoded variants are
    /// served this way); `nil` on a miss. Default: `nil` (a cache that keeps only decoded images).
    /// - Throws: errors the cache cannot treat as a miss (an unreadable disk).
    func cachedData(forKey key: String) async throws -> CachedData?

    /// Returns once every store the cache accepted without waiting (background writes) has reached
    /// its tiers. Default: returns at once (a cache that writes before returning has nothing pending).
    func flush() async

    /// Runs the cache's background work (sweeps, connections) in the calling task and returns when
    /// that task is cancelled. Default: waits for cancellation (a cache with no background work).
    func run() async

    /// Flushes, then stops the cache's timers and background work for good; reads and awaited
    /// stores may go on. ``WebImageManager/shutdown(loadsInFlight:)`` calls it. Default: ``flush()``.
    func shutdown() async

    /// Fleet-wide single flight, called by ``WebImageManager`` after every tier missed `key` and
    /// before it fetches the key's bytes from the origin (or encodes a variant), when it will store
    /// them under `key`. A cache shared by several processes either claims the key for this
    /// process and returns `nil` (the manager fetches, and its store under `key` ends the claim), or
    /// waits (bounded) for the process that holds the claim to store the key, puts those bytes in
    /// its local tiers and returns them. Default: `nil` at once (a cache of one process).
    func beginFill(forKey key: String) async -> CachedData?

    /// Ends this process's claim on `key` without storing it (the fetch failed): processes waiting
    /// for it stop waiting. Default: nothing.
    func abandonFill(forKey key: String) async
}

/// A cache whose first tiers are an ``ImageCache`` (a shared tier behind a process's memory and
/// disk, say): ``WebImageManager`` answers memory hits from ``localCache`` without suspending and
/// sets its observer, as it does for an ``ImageCache`` itself.
public protocol LayeredImageCaching: ImageCaching {
    /// The process's own memory and disk tiers, searched first.
    var localCache: ImageCache { get }
}

extension ImageCaching {
    /// Keeps no bytes: always a miss.
    public func cachedData(forKey key: String) async throws -> CachedData? { nil }

    /// Nothing is pending: returns at once.
    public func flush() async {}

    /// Nothing runs in the background: waits until the calling task is cancelled.
    public func run() async {
        await waitForCancellation()
    }

    /// Flushes.
    public func shutdown() async {
        await flush()
    }

    /// A cache of one process: never waits, claims nothing.
    public func beginFill(forKey key: String) async -> CachedData? { nil }

    /// A cache of one process holds no claims.
    public func abandonFill(forKey key: String) async {}

    /// Decodes `data` with ``CoderRegistry/shared`` and stores the image with its bytes in the disk
    /// tier: the fallback for caches that only store images.
    /// - Throws: ``ImageCodingError`` when the bytes are not an image, or the store's error.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws {
        let image = try CoderRegistry.shared.decode(data)
        try await store(image, data: data, forKey: key, cacheType: .disk, metadata: metadata)
    }
}
