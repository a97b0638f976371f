import Foundation

/// What one load of ``WebImageManager`` was, where its image came from, and where its time went:
/// the payload of ``WebImageEvent/loadFinished(_:)``.
public struct ImageLoadReport: Sendable {
    /// The URL asked for.
    public var url: URL
    /// The key the result is cached under; `nil` when the load caches nothing (its key filter said
    /// so) or failed before the key was made.
    public var cacheKey: String?
    /// The options the load ran with (after the manager's options processor).
    public var options: WebImageOptions
    /// The context the load ran with (after the manager's options processor).
    public var context: WebImageContext
    /// Where the image came from; ``ImageLoadSource/none`` for a failed load.
    public var source: ImageLoadSource
    /// Bytes read for this load: downloaded for a network load, read from disk for a disk hit, 0 for
    /// a memory hit.
    public var byteCount: Int
    /// Whether this caller joined a load of the same key already under way (its stages are that
    /// load's).
    public var joinedLoadUnderWay: Bool
    /// Time per stage, and in all.
    public var durations: ImageLoadDurations
    /// The error the load threw; `nil` when it returned an image.
    public var error: WebImageError?

    /// Creates a report (WebImage makes them; tests and bridges may too).
    public init(url: URL, cacheKey: String?, options: WebImageOptions, context: WebImageContext, source: ImageLoadSource,
                byteCount: Int = 0, joinedLoadUnderWay: Bool = false, durations: ImageLoadDurations = ImageLoadDurations(),
                error: WebImageError? = nil) {
        self.url = url
        self.cacheKey = cacheKey
        self.options = options
        self.context = context
        self.source = source
        self.byteCount = byteCount
        self.joinedLoadUnderWay = joinedLoadUnderWay
        self.durations = durations
        self.error = error
    }
}

/// Where a loaded image came from.
public enum ImageLoadSource: String, Sendable, Hashable, CaseIterable {
    /// The memory tier.
    case memory
    /// The disk tier (decoded).
    case disk
    /// A tier shared between processes (a ``LayeredImageCaching``'s Redis), decoded.
    case shared
    /// The network (or the loader: a file, a data URL).
    case network
    /// Made from a cached original (a thumbnail or transform) without the loader.
    case derived
    /// Nowhere: the load failed.
    case none
}

/// Time a load spent in each stage; zero for a stage it did not go through.
public struct ImageLoadDurations: Sendable, Hashable {
    /// Waiting for a free download slot.
    public var queued: Duration = .zero
    /// Looking in the cache tiers (a disk hit's read and decode included).
    public var lookup: Duration = .zero
    /// Downloading, from leaving the queue to the last byte.
    public var download: Duration = .zero
    /// Decoding downloaded bytes.
    public var decode: Duration = .zero
    /// Running the transformer, and resampling a derived thumbnail.
    public var transform: Duration = .zero
    /// Encoding (encoded variants only).
    public var encode: Duration = .zero
    /// Storing into the cache tiers (the memory store, and the disk write when it is awaited).
    public var store: Duration = .zero
    /// From the call to its result, as this caller saw it.
    public var total: Duration = .zero

    /// Creates zeroed durations.
    public init() {}
}
