import Foundation
import WebImage

/// A process's ``ImageCache`` (pixels in memory, bytes on disk) in front of a fleet's ``RedisTier``
/// (bytes in Redis): memory → local disk → Redis → origin. A ``LayeredImageCache`` over the Redis tier:
///
/// - A **Redis hit** is decoded from its bytes and reported as ``ImageCacheType/disk``; its bytes go to
///   the local disk in the background (``flush()`` waits for them), the image to memory at once.
/// - A **store** reaches the local tiers and then Redis. ``WebImageManager`` makes disk stores in
///   the background unless ``WebImageOptions/waitStoreCache``, so a load never waits for Redis.
/// - **Fleet-wide single flight**: ``beginFill(forKey:)`` claims a key missing everywhere, or waits
///   for the process that claimed it (see ``RedisTier``).
/// - **Redis failing never fails a call**: reads miss, writes stay local; ``RedisTier/statistics``
///   counts it. Only the local tiers' own failures are thrown, as ``ImageCache`` throws them.
///
/// Give it to ``WebImageManager/init(cache:loader:coders:config:)``; the manager answers memory
/// hits from ``localCache`` directly, as it does for a plain ``ImageCache``.
public final class RedisImageCache: LayeredImageCache, @unchecked Sendable {
    // @unchecked Sendable (restated, as Swift requires of a subclass): its one stored property is a `let`
    // of a Sendable type (`shared: RedisTier`), and ``LayeredImageCache``'s are `let`s of Sendable types too.
    /// The shared tier behind the local cache.
    public let shared: RedisTier

    /// Puts `shared` behind `local`. Never throws or blocks (Redis is reached on first use). The
    /// tier stays open at ``shutdown()``, for its other users.
    public convenience init(local: ImageCache, shared: RedisTier) {
        self.init(local: local, shared: shared, ownsTier: false)
    }

    /// Creates the local cache and the tier in one call; ``shutdown()`` closes the tier.
    /// - Parameters:
    ///   - local: the process's cache; default a new ``ImageCache`` in namespace `default`.
    ///   - redis: the servers, namespace, limits and timeouts (``RedisTierConfig``).
    public convenience init(local: ImageCache = ImageCache(namespace: "default"), redis: RedisTierConfig) {
        self.init(local: local, shared: RedisTier(config: redis), ownsTier: true)
    }

    private init(local: ImageCache, shared: RedisTier, ownsTier: Bool) {
        self.shared = shared
        super.init(inner: local, tier: shared, ownsTier: ownsTier)
    }
}
