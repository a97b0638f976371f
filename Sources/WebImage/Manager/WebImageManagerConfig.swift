import Foundation

/// Rewrites the options and context of each load before it starts (SDWebImage's
/// `SDWebImageOptionsProcessor`): to force a thumbnail size for one host, say.
public typealias OptionsProcessor = @Sendable (_ url: URL, _ options: inout WebImageOptions, _ context: inout WebImageContext) -> Void

/// Settings of a ``WebImageManager`` that apply to every load.
public struct WebImageManagerConfig: Sendable {
    /// Runs first for every load and may change its options and context; default `nil`.
    public var optionsProcessor: OptionsProcessor?
    /// Asked before each download; returning `false` fails the load with
    /// ``WebImageError/rejected(url:reason:)`` instead of downloading; default `nil` (always download).
    public var shouldDownload: (@Sendable (URL) -> Bool)?
    /// How long a URL that failed permanently stays on the blocklist (``WebImageError/blocksURL``);
    /// default 10 minutes; `.zero` blocks nothing.
    public var failedURLBlockDuration: Duration
    /// Retries of transient failures; default `nil` (no retries).
    public var retryPolicy: RetryPolicy?
    /// How often a progressive load may decode a partial image at most; default every 100 ms (one
    /// partial decode is in flight at a time regardless).
    public var partialImageInterval: Duration
    /// The most bytes of encoded variants (``WebImageManager/loadVariant(url:format:encoding:options:context:)``)
    /// the manager keeps in memory, least recently used dropped first; a variant over a tenth of it
    /// is served from disk only; default 64 MiB; 0 keeps none in memory.
    public var maxVariantMemoryCost: Int
    /// When a new variant enters that memory tier; default ``VariantMemoryAdmission/whenEncoded``
    /// (an image server wants ``VariantMemoryAdmission/whenReused``).
    public var variantMemoryAdmission: VariantMemoryAdmission
    /// Bounds on source bytes, source pixels, animation frames and output pixels; default `ImageLimits()`.
    public var limits: ImageLimits

    /// Creates a configuration; every parameter defaults to the property's documented default.
    public init(optionsProcessor: OptionsProcessor? = nil, shouldDownload: (@Sendable (URL) -> Bool)? = nil,
                failedURLBlockDuration: Duration = .seconds(600), retryPolicy: RetryPolicy? = nil,
                partialImageInterval: Duration = .milliseconds(100), maxVariantMemoryCost: Int = 64 << 20,
                variantMemoryAdmission: VariantMemoryAdmission = .whenEncoded, limits: ImageLimits = ImageLimits()) {
        self.optionsProcessor = optionsProcessor
        self.shouldDownload = shouldDownload
        self.failedURLBlockDuration = failedURLBlockDuration
        self.retryPolicy = retryPolicy
        self.partialImageInterval = partialImageInterval
        self.maxVariantMemoryCost = maxVariantMemoryCost
        self.variantMemoryAdmission = variantMemoryAdmission
        self.limits = limits
    }
}
