import Foundation

/// How a cache query looks for an image.
public struct ImageCacheQuery: Sendable {
    /// The tiers to search; default ``ImageCacheType/all`` (memory first, then disk).
    public var cacheType: ImageCacheType
    /// How a disk hit is decoded (thumbnail size, limits, orientation); default ``DecodeOptions/init()``.
    public var decodeOptions: DecodeOptions
    /// Whether an image decoded from disk is also put in the memory tier; default `true`.
    public var promotesToMemory: Bool
    /// Whether the result carries the stored bytes too, even for a memory hit (a disk read; SDWebImage's
    /// `queryMemoryData`); default `false`.
    public var includesData: Bool
    /// Whether a disk hit also reads the entry's ``DiskCacheMetadata`` (one more read of an extended
    /// attribute or sidecar file); default `true`.
    public var includesMetadata: Bool

    /// Creates a query; every parameter defaults to the property's documented default.
    public init(cacheType: ImageCacheType = .all, decodeOptions: DecodeOptions = DecodeOptions(),
                promotesToMemory: Bool = true, includesData: Bool = false, includesMetadata: Bool = true) {
        self.cacheType = cacheType
        self.decodeOptions = decodeOptions
        self.promotesToMemory = promotesToMemory
        self.includesData = includesData
        self.includesMetadata = includesMetadata
    }
}
