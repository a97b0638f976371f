import Foundation

/// Warms the cache with images that will be needed soon (SDWebImage's `SDWebImagePrefetcher`): at
/// low priority, a few at a time, in batches that can be watched and cancelled.
///
/// All batches share one limit, ``maxConcurrentPrefetchCount``; URLs start in the order they were
/// handed in. A URL that fails or is cancelled is *skipped*; a batch always completes.
public actor Prefetcher {
    /// A prefetcher over ``WebImageManager/shared``.
    public static let shared = Prefetcher()

    /// The manager loads go through.
    public nonisolated let manager: WebImageManager
    /// How many URLs load at once across all batches; default 3. Raising it starts more at once.
    public private(set) var maxConcurrentPrefetchCount: Int

    private struct Item {
        var url: URL
        var token: PrefetchToken
        var options: WebImageOptions
        var context: WebImageContext
        var storesDataOnly: Bool
    }

    private var queue = FIFOBuffer<Item>()
    private var running: [UInt64: (task: Task<Void, Never>, token: PrefetchToken)] = [:]
    private var sequence: UInt64 = 0

    /// Creates a prefetcher.
    /// - Parameters:
    ///   - manager: default ``WebImageManager/shared``.
    ///   - maxConcurrentPrefetchCount: default 3 (at least 1).
    public init(manager: WebImageManager = .shared, maxConcurrentPrefetchCount: Int = 3) {
        self.manager = manager
        self.maxConcurrentPrefetchCount = max(1, maxConcurrentPrefetchCount)
    }

    /// Changes the concurrency limit (at least 1); a higher one starts queued URLs at once.
    public func setMaxConcurrentPrefetchCount(_ count: Int) {
        maxConcurrentPrefetchCount = max(1, count)
        startQueued()
    }

    /// Queues `urls` for loading into the cache and returns the batch's token at once.
    ///
    /// - Parameters:
    ///   - urls: the images to prefetch; an empty list gives a token that is already complete.
    ///   - options: load options; ``WebImageOptions/lowPriority`` is added unless
    ///     ``WebImageOptions/highPriority`` is given; default `[]`.
    ///   - context: load context (thumbnail size, transformer...); default none.
    ///   - storesDataOnly: download the bytes to the disk tier without decoding them (for images
    ///     wanted later, cheaply); default `false`. A URL already on disk is not downloaded again.
    /// - Returns: the token to watch (``PrefetchToken/progressUpdates()``), await
    ///   (``PrefetchToken/completion()``) or cancel the batch with.
    @discardableResult
    public func prefetch(urls: [URL], options: WebImageOptions = [], context: WebImageContext = WebImageContext(),
                         storesDataOnly: Bool = false) -> PrefetchToken {
        let token = PrefetchToken(totalCount: urls.count) { [weak self] token in
            guard let self else { return }
            Task { await self.cancel(token) }
        }
        let options = options.contains(.highPriority) ? options : options.union(.lowPriority)
        queue.append(contentsOf: urls.map { Item(url: $0, token: token, options: options, context: context, storesDataOnly: storesDataOnly) })
        startQueued()
        return token
    }

    /// Cancels every batch.
    public func cancelAll() {
        for item in queue.removeAll() {
            item.token.cancel()
            item.token.record(finished: false)
        }
        for entry in running.values {
            entry.token.cancel()
            entry.task.cancel()
        }
    }

    /// URLs waiting for a slot.
    public var queuedCount: Int { queue.count }

    /// URLs loading now.
    public var runningCount: Int { running.count }

    private func cancel(_ token: PrefetchToken) {
        for _ in queue.removeAll(where: { $0.token === token }) { token.record(finished: false) }
        for entry in running.values where entry.token === token { entry.task.cancel() }
    }

    private func startQueued() {
        while running.count < maxConcurrentPrefetchCount, let item = queue.popFirst() {
            if item.token.isCancelled {
                item.token.record(finished: false)
                continue
            }
            sequence += 1
            let id = sequence
            let manager = self.manager
            let task = Task {
                let loaded = await Self.load(item, manager: manager)
                self.finished(id, token: item.token, loaded: loaded)
            }
            running[id] = (task, item.token)
        }
    }

    private func finished(_ id: UInt64, token: PrefetchToken, loaded: Bool) {
        running[id] = nil
        token.record(finished: loaded)
        startQueued()
    }

    /// Loads one URL; whether it ended in the cache.
    private static func load(_ item: Item, manager: WebImageManager) async -> Bool {
        guard item.storesDataOnly else {
            return (try? await manager.loadImage(url: item.url, options: item.options, context: item.context)) != nil
        }
        // The bytes are the original: they go where originals go, under the original's key, or
        // nowhere when the key filter says "cache nothing".
        let cache = item.context.originalCache ?? item.context.cache ?? manager.cache
        let loader = item.context.loader ?? manager.loader
        guard let key = manager.originalCacheKey(for: item.url, absoluteString: item.url.absoluteString, context: item.context) else {
            return false
        }
        if await cache.containsImage(forKey: key, cacheType: .disk) != .none { return true }
        guard !manager.isFailedURL(item.url) || item.options.contains(.retryFailed), loader.canLoad(item.url) else { return false }
        do {
            let response = try await loader.load(ImageLoadRequest(url: item.url, priority: item.options.downloadPriority,
                                                                  headers: item.context.httpHeaders),
                                                 progress: nil)
            let metadata = DiskCacheMetadata(entityTag: response.validators.entityTag,
                                             lastModified: response.validators.lastModified, maxAge: response.maxAge)
            try await cache.storeData(response.data, forKey: key, metadata: metadata)
            return true
        } catch {
            return false
        }
    }
}
