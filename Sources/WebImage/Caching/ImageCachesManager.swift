import Foundation

/// Several caches behind one ``ImageCaching`` (SDWebImage's `SDImageCachesManager`): for example a
/// process-local ``ImageCache`` in front of a shared tier.
///
/// Caches are ordered as added; the *highest* is the last added. The policies say which caches
/// each operation reaches.
public final class ImageCachesManager: ImageCaching {
    /// Which caches an operation reaches.
    public enum Policy: Sendable, Hashable {
        /// Only the last added cache.
        case highestOnly
        /// Only the first added cache.
        case lowestOnly
        /// Every cache, one after another from the highest, stopping at the first hit (queries).
        case serial
        /// Every cache at once.
        case concurrent
    }

    /// The caches, first added first.
    public let caches: [any ImageCaching]
    /// How queries search; default ``Policy/serial`` (highest first, first hit wins).
    public let queryPolicy: Policy
    /// Where stores go; default ``Policy/highestOnly``.
    public let storePolicy: Policy
    /// Where removals and clears go; default ``Policy/concurrent`` (every cache).
    public let removePolicy: Policy

    /// Creates a manager over `caches` with the given policies (defaults as documented on each property).
    public init(caches: [any ImageCaching], queryPolicy: Policy = .serial, storePolicy: Policy = .highestOnly,
                removePolicy: Policy = .concurrent) {
        self.caches = caches
        self.queryPolicy = queryPolicy
        self.storePolicy = storePolicy
        self.removePolicy = removePolicy
    }

    private func targets(_ policy: Policy) -> [any ImageCaching] {
        switch policy {
        case .highestOnly: caches.last.map { [$0] } ?? []
        case .lowestOnly: caches.first.map { [$0] } ?? []
        case .serial, .concurrent: caches.reversed()
        }
    }

    /// The first hit among the caches the query policy reaches, highest first.
    /// - Throws: the first error a cache throws.
    public func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? {
        for cache in targets(queryPolicy) {
            if let result = try await cache.query(forKey: key, query: query) { return result }
        }
        return nil
    }

    /// Stores in the caches the store policy reaches (concurrently when it reaches several).
    /// - Throws: the first error a cache throws; the others still store.
    public func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for cache in targets(storePolicy) {
                group.addTask { try await cache.store(image, data: data, forKey: key, cacheType: cacheType, metadata: metadata) }
            }
            try await group.waitForAll()
        }
    }

    /// Removes from the caches the remove policy reaches, concurrently.
    public func removeImage(forKey key: String, cacheType: ImageCacheType) async {
        await withTaskGroup(of: Void.self) { group in
            for cache in targets(removePolicy) {
                group.addTask { await cache.removeImage(forKey: key, cacheType: cacheType) }
            }
        }
    }

    /// The tier of the first cache (highest first, per the query policy) that holds `key`.
    public func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType {
        for cache in targets(queryPolicy) {
            let found = await cache.containsImage(forKey: key, cacheType: cacheType)
            if found != .none { return found }
        }
        return .none
    }

    /// Clears the caches the remove policy reaches, concurrently.
    public func clear(_ cacheType: ImageCacheType) async {
        await withTaskGroup(of: Void.self) { group in
            for cache in targets(removePolicy) {
                group.addTask { await cache.clear(cacheType) }
            }
        }
    }
}
