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
        /// Every cache at once: a query or `containsImage` first asks every cache's memory tier (a
        /// memory hit in any cache wins, as in SDWebImage), then the other tiers of all of them at
        /// once, answering with the first hit to arrive and cancelling the rest; stores and removals
        /// reach every cache together.
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

    /// The first hit among the caches the query policy reaches: highest first, one after another
    /// (``Policy/serial``), or the first to answer (``Policy/concurrent``, the others are cancelled).
    /// - Throws: the first error a cache throws (``Policy/concurrent``: only when no cache hits).
    public func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult? {
        let caches = targets(queryPolicy)
        guard queryPolicy == .concurrent, caches.count > 1, query.cacheType == .all else {
            return try await firstAnswer(from: caches) { cache in try await cache.query(forKey: key, query: query) }
        }
        var memoryQuery = query, diskQuery = query
        memoryQuery.cacheType = .memory
        diskQuery.cacheType = .disk
        let inMemory = memoryQuery, beyondMemory = diskQuery
        if let hit = try await firstAnswer(from: caches, { cache in try await cache.query(forKey: key, query: inMemory) }) { return hit }
        return try await firstAnswer(from: caches) { cache in try await cache.query(forKey: key, query: beyondMemory) }
    }

    /// The first stored bytes for `key` among the caches the query policy reaches, like ``query(forKey:query:)``.
    /// - Throws: as ``query(forKey:query:)``.
    public func cachedData(forKey key: String) async throws -> CachedData? {
        try await firstAnswer(from: targets(queryPolicy)) { cache in try await cache.cachedData(forKey: key) }
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

    /// The tier of the first cache that holds `key`, asked as the query policy says (highest first,
    /// or all at once with the first to answer winning).
    public func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType {
        let caches = targets(queryPolicy)
        var tiersLeft = cacheType
        if queryPolicy == .concurrent, caches.count > 1, cacheType == .all {
            let inMemory = try? await firstAnswer(from: caches) { cache -> ImageCacheType? in
                await cache.containsImage(forKey: key, cacheType: .memory) == .memory ? .memory : nil
            }
            if (inMemory ?? nil) != nil { return .memory }
            tiersLeft = .disk
        }
        let beyondMemory = tiersLeft
        let found = try? await firstAnswer(from: caches) { cache -> ImageCacheType? in
            let tier = await cache.containsImage(forKey: key, cacheType: beyondMemory)
            return tier == .none ? nil : tier
        }
        return (found ?? nil) ?? .none
    }

    /// The first non-nil answer of `ask` over `caches`: one after another in order, or, with the
    /// ``Policy/concurrent`` query policy, all at once, taking the first to arrive and cancelling the
    /// rest. Errors are thrown only when no cache answers (the first error, in arrival order).
    private func firstAnswer<Answer: Sendable>(from caches: [any ImageCaching],
                                               _ ask: @escaping @Sendable (any ImageCaching) async throws -> Answer?) async throws -> Answer? {
        guard queryPolicy == .concurrent, caches.count > 1 else {
            for cache in caches {
                if let answer = try await ask(cache) { return answer }
            }
            return nil
        }
        return try await withThrowingTaskGroup(of: Answer?.self) { group in
            for cache in caches {
                group.addTask { try await ask(cache) }
            }
            var firstError: (any Error)?
            while let next = await group.nextResult() {
                switch next {
                case .success(let answer?):
                    group.cancelAll()
                    return answer
                case .success(nil):
                    continue
                case .failure(let error):
                    firstError = firstError ?? error
                }
            }
            if let firstError { throw firstError }
            return nil
        }
    }

    /// The first bytes a cache the store policy reaches gives, asked one after another; the caches
    /// asked before it end the claims they may have taken (the bytes will not be stored to them).
    /// `nil` when none gives bytes.
    public func beginFill(forKey key: String) async -> CachedData? {
        let caches = targets(storePolicy)
        for (index, cache) in caches.enumerated() {
            guard let filled = await cache.beginFill(forKey: key) else { continue }
            for earlier in caches[..<index] { await earlier.abandonFill(forKey: key) }
            return filled
        }
        return nil
    }

    /// Ends the claims on `key` of every cache the store policy reaches.
    public func abandonFill(forKey key: String) async {
        for cache in targets(storePolicy) { await cache.abandonFill(forKey: key) }
    }

    /// Clears the caches the remove policy reaches, concurrently.
    public func clear(_ cacheType: ImageCacheType) async {
        await withTaskGroup(of: Void.self) { group in
            for cache in targets(removePolicy) {
                group.addTask { await cache.clear(cacheType) }
            }
        }
    }

    /// Flushes every cache, concurrently.
    public func flush() async {
        await everyCache { await $0.flush() }
    }

    /// Runs every cache's background work concurrently in the calling task; returns when that task
    /// is cancelled (and every cache's `run()` has returned).
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await waitForCancellation() }   // returns on cancellation even with no cache
            for cache in caches {
                group.addTask { await cache.run() }
            }
        }
    }

    /// Shuts every cache down, concurrently.
    public func shutdown() async {
        await everyCache { await $0.shutdown() }
    }

    private func everyCache(_ body: @escaping @Sendable (any ImageCaching) async -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            for cache in caches {
                group.addTask { await body(cache) }
            }
        }
    }
}
