import Foundation
import Synchronization

/// Where the manager keeps one kind of ``DerivedProduct`` (encoded variants, image facts): the
/// same shape for each, written once.
///
/// - A memory tier of its own.
/// - The cache's stored bytes under the product's own key.
/// - A coalescer, so one make serves every concurrent caller of a key.
/// - A fleet's fill claim on the key (``ImageCaching/beginFill(forKey:)``): another process's
///   product is read instead of made.
/// - One store step: memory, then disk through ``CacheWriteStep`` (awaited or in the background).
///
/// It counts nothing itself: the hooks given at creation count hits and fills where the owner keeps
/// its statistics.
final class DerivedProductStore<Product: DerivedProduct>: Sendable {
    /// The memory tier.
    let memory: MemoryCache<String, Product>
    /// Makes under way, one per key.
    let coalescer = LoadCoalescer<MadeProduct<Product>>()
    /// Whether products enter ``memory`` (a variant tier whose cost limit is 0 keeps none).
    private let keepsInMemory: Atomic<Bool>
    private let countMemoryHit: @Sendable () -> Void
    private let countStoredHit: @Sendable () -> Void
    private let countFill: @Sendable () -> Void

    /// A store over `memory` (`keepsInMemory`: whether it is used at all), with hooks counting
    /// memory hits, stored-bytes hits and another process's fills (default: nothing counted).
    init(memory: MemoryCache<String, Product>, keepsInMemory: Bool = true,
         countingMemoryHit: @escaping @Sendable () -> Void = {}, countingStoredHit: @escaping @Sendable () -> Void = {},
         countingFill: @escaping @Sendable () -> Void = {}) {
        self.memory = memory
        self.keepsInMemory = Atomic(keepsInMemory)
        countMemoryHit = countingMemoryHit
        countStoredHit = countingStoredHit
        countFill = countingFill
    }

    /// Sets the memory tier's cost limit; 0 keeps nothing there.
    func setMemoryCostLimit(_ limit: Int) {
        memory.totalCostLimit = max(limit, 0)
        keepsInMemory.store(limit > 0, ordering: .relaxed)
    }

    /// The product under `key` in the memory tier, when the context queries memory (a hit counted).
    /// Synchronous: a server asks it on its network thread.
    @inline(__always)
    func memoryValue(forKey key: String, context: WebImageContext) -> Product? {
        guard context.queryCacheType.includesMemory, let product = memory.value(forKey: key) else { return nil }
        countMemoryHit()
        return product
    }

    /// The product under `key` in `cache`'s stored bytes, or `nil` (a miss, an unreadable entry,
    /// bytes that are not one).
    func storedValue(forKey key: String, in cache: any ImageCaching) async -> Product? {
        guard let stored = try? await cache.cachedData(forKey: key) else { return nil }
        return Product(stored: stored)
    }

    /// The product under `key` in the memory tier, else in `cache`'s stored bytes (promoted to
    /// memory when the context stores there), as the context's query tiers allow.
    @inline(__always)
    func lookUp(forKey key: String, context: WebImageContext, cache: any ImageCaching) async -> Product? {
        if let product = memoryValue(forKey: key, context: context) { return product }
        guard context.queryCacheType.includesDisk, let product = await storedValue(forKey: key, in: cache) else { return nil }
        countStoredHit()
        if context.storeCacheType.includesMemory { keepInMemory(product, forKey: key) }
        return product
    }

    /// Puts `product` in the memory tier (marked as answered from there).
    func keepInMemory(_ product: Product, forKey key: String) {
        guard keepsInMemory.load(ordering: .relaxed) else { return }
        memory.setValue(product.answeredFromMemory, forKey: key, cost: product.memoryCost)
    }

    /// The product for `key`, made once for every concurrent caller: another process's, when the
    /// product is stored on disk and the cache coordinates fills (`claimsFill`; kept in memory as
    /// the context says), else `make`'s (a failed make ends the claim).
    /// - Parameters:
    ///   - key: `nil` when the product is not cached (each caller makes its own).
    ///   - joined: told whether this caller joined a make under way.
    /// - Throws: `make`'s error; `cancelled` or `shutDown` from the coalescer.
    func make(key: String?, url: URL, context: WebImageContext, cache: any ImageCaching, claimsFill: Bool, joined: (Bool) -> Void,
              _ make: @escaping @Sendable () async throws(WebImageError) -> MadeProduct<Product>) async throws(WebImageError) -> MadeProduct<Product> {
        try await coalescer.run(key: key ?? UUID().uuidString, cancellation: .cancelled(url: url), refusal: .shutDown(url: url),
                                events: nil, joined: joined, executor: context.workExecutor) { _ async throws(WebImageError) in
            guard let key, claimsFill else { return try await make() }
            if let filled = await cache.beginFill(forKey: key), let product = Product(stored: filled) {
                self.countFill()
                if context.storeCacheType.includesMemory { self.keepInMemory(product, forKey: key) }
                return MadeProduct(product: product, duration: .zero)
            }
            do throws(WebImageError) {
                return try await make()
            } catch {
                await cache.abandonFill(forKey: key)
                throw error
            }
        }
    }

    /// Stores a product just made: in the memory tier at once unless `admitsToMemoryOnReuse` and the
    /// disk will have it (``VariantMemoryAdmission/whenReused``), and on disk through `writes` as the
    /// options and context say.
    /// - Throws: `cacheStoreFailed` for an awaited write (``WebImageOptions/waitStoreCache``).
    func store(_ product: Product, forKey key: String, options: WebImageOptions, context: WebImageContext, cache: any ImageCaching,
               url: URL, admitsToMemoryOnReuse: Bool = false, writes: CacheWriteStep) async throws(WebImageError) {
        let storesOnDisk = context.storeCacheType.includesDisk && !options.contains(.cacheMemoryOnly)
        if context.storeCacheType.includesMemory && (!storesOnDisk || !admitsToMemoryOnReuse) { keepInMemory(product, forKey: key) }
        guard storesOnDisk, let (data, metadata) = product.storedForm() else { return }
        try await writes.run(key: key, url: url, awaited: options.contains(.waitStoreCache), executor: context.workExecutor) {
            try await cache.storeData(data, forKey: key, metadata: metadata)
        }
    }

    /// Refuses new makes (a shutdown).
    func close() {
        coalescer.close()
    }

    /// Cancels the makes under way.
    func cancelAll() {
        coalescer.cancelAll()
    }

    /// Waits until no make runs.
    func waitUntilIdle() async {
        await coalescer.waitUntilIdle()
    }
}
