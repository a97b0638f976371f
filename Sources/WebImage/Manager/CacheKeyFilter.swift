import Foundation

/// Turns a URL into the key its image is cached under (SDWebImage's `SDWebImageCacheKeyFilter`):
/// to drop a changing query parameter (a signed URL's expiry, say) so that every variant shares
/// one entry.
public protocol CacheKeyFilter: Sendable {
    /// The cache key for `url`, or `nil` to cache nothing for it.
    func cacheKey(for url: URL) -> String?
}

/// A ``CacheKeyFilter`` made from a closure.
public struct ClosureCacheKeyFilter: CacheKeyFilter {
    private let body: @Sendable (URL) -> String?

    /// Creates a filter that calls `body` for each URL.
    public init(_ body: @escaping @Sendable (URL) -> String?) {
        self.body = body
    }

    /// What the closure returns for `url`.
    public func cacheKey(for url: URL) -> String? {
        body(url)
    }
}
