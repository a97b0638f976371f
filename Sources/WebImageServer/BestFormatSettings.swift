import WebImage

/// imgproxy Pro's `format:best` settings (`IMGPROXY_BEST_FORMAT_*`): how a URL asking for `best`
/// (`f:best`, `@best`) is answered (``WebImage/BestFormat``). Every default is imgproxy's.
public struct BestFormatSettings: Sendable, Equatable {
    /// `IMGPROXY_BEST_FORMAT_COMPLEXITY_THRESHOLD`: pictures whose ``WebImage/ImageComplexity`` is below it are
    /// encoded losslessly; default 5.5; 0 always encodes lossy.
    public var complexityThreshold = BestFormat.defaultComplexityThreshold
    /// `IMGPROXY_BEST_FORMAT_MAX_RESOLUTION`, in pixels here (megapixels in the variable): larger
    /// pictures are encoded once, in the candidate that usually wins; default `nil`: no limit.
    public var maxPixelCount: Int?
    /// `IMGPROXY_BEST_FORMAT_BY_DEFAULT`: a URL naming no format is answered as `best`; default `false`.
    public var isDefault = false
    /// `IMGPROXY_BEST_FORMAT_ALLOW_SKIPS`: with `best`, SVG sources are still passed through and
    /// `skip_processing` formats still skipped; default `false`: `best` processes every source.
    public var allowsSkips = false

    /// imgproxy's defaults.
    public init() {}
}
