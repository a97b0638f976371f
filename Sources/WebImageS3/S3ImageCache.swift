import Foundation
import WebImage

/// A process's cache (an ``ImageCache``, or a ``LayeredImageCaching`` such as a Redis tier in front)
/// in front of a durable ``S3Tier``: memory → local disk → (Redis) → object store → origin. A
/// ``LayeredImageCache`` over the store:
///
/// - A **hit in the store** (one GET) is decoded from its bytes and answered as a disk hit; the bytes
///   go into the faster tiers (the inner cache's disk, and Redis when it has one) in the background.
/// - A **store** reaches the inner cache, then the object store **in the background**: a load never
///   waits for a PUT; ``flush()`` and ``shutdown()`` wait for them.
/// - **Fleet-wide single flight** is the inner cache's (``beginFill(forKey:)``): with Redis in
///   front, one process of the fleet fetches a key from the origin and fills the store.
/// - **Failure is slower, never an error**: a down, slow or refusing store is a miss (bounded by the
///   client's time-outs, retried, then skipped by its breaker); only the inner cache's own errors
///   are thrown.
///
/// Give it to ``WebImageManager/init(cache:loader:coders:config:)``.
public final class S3ImageCache: LayeredImageCache, @unchecked Sendable {
    // @unchecked Sendable (restated, as Swift requires of a subclass): its one stored property is a `let`
    // of a Sendable type (`store: S3Tier`), and ``LayeredImageCache``'s are `let`s of Sendable types too.
    /// The durable tier behind the inner cache.
    public let store: S3Tier

    /// Puts `store` behind `inner` (an ``ImageCache`` or a ``LayeredImageCaching`` over one); the
    /// store's sweeps run in ``run()``.
    /// - Precondition: `inner` is one of those (another cache has no local tiers to name).
    public init(inner: any ImageCaching, store: S3Tier) {
        self.store = store
        super.init(inner: inner, tier: store)
    }
}
