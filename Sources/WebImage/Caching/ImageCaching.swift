import Foundation

/// Which tiers of a cache an operation touches, or where a result came from (SDWebImage's `SDImageCacheType`).
public enum ImageCacheType: Sendable, Hashable {
    /// No tier: not cached, or fetched from the network.
    case none
    /// The in-memory tier only.
    case memory
    /// The on-disk tier only.
    case disk
    /// Both tiers.
    case all

    /// Whether this value includes the memory tier.
    public var includesMemory: Bool { self == .memory || self == .all }
    /// Whether this value includes the disk tier.
    public var includesDisk: Bool { self == .disk || self == .all }
}

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

/// A cache hit.
public struct ImageCacheResult: Sendable {
    /// The decoded image.
    public var image: Image
    /// The stored bytes, when the disk tier was read (always for a disk hit, for a memory hit only with
    /// ``ImageCacheQuery/includesData``).
    public var data: Data?
    /// The tier that had the image: ``ImageCacheType/memory`` or ``ImageCacheType/disk``.
    public var cacheType: ImageCacheType
    /// The metadata stored with the disk entry (HTTP validators, extended data), when read from disk.
    public var metadata: DiskCacheMetadata?

    /// Creates a result.
    public init(image: Image, data: Data?, cacheType: ImageCacheType, metadata: DiskCacheMetadata? = nil) {
        self.image = image
        self.data = data
        self.cacheType = cacheType
        self.metadata = metadata
    }
}

/// What ``WebImageManager`` needs of a cache, so that any store (a shared Redis or S3 tier, a
/// composition of several caches) can take the place of ``ImageCache``.
public protocol ImageCaching: Sendable {
    /// Looks up `key` in the tiers `query` names and returns the first hit, or `nil`.
    /// - Throws: errors the cache cannot treat as a miss (an unreadable disk).
    func query(forKey key: String, query: ImageCacheQuery) async throws -> ImageCacheResult?

    /// Stores `image` (and its encoded `data`, if known) under `key` in the tiers `cacheType` names,
    /// returning once every tier has it.
    /// - Throws: a tier's failure (a full disk); tiers that succeeded keep the image.
    func store(_ image: Image, data: Data?, forKey key: String, cacheType: ImageCacheType, metadata: DiskCacheMetadata?) async throws

    /// Stores encoded bytes under `key` on disk only, without keeping a decoded image in memory
    /// (the original of a thumbnail or transformed load, a prefetch that does not decode).
    /// - Throws: the disk tier's failure.
    func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws

    /// Removes `key` from the tiers `cacheType` names.
    func removeImage(forKey key: String, cacheType: ImageCacheType) async

    /// The tier that holds `key` (memory first), or ``ImageCacheType/none``, without decoding.
    func containsImage(forKey key: String, cacheType: ImageCacheType) async -> ImageCacheType

    /// Removes everything from the tiers `cacheType` names.
    func clear(_ cacheType: ImageCacheType) async
}

extension ImageCaching {
    /// Decodes `data` with ``CoderRegistry/shared`` and stores the image with its bytes in the disk
    /// tier: the fallback for caches that only store images.
    /// - Throws: ``ImageCodingError`` when the bytes are not an image, or the store's error.
    public func storeData(_ data: Data, forKey key: String, metadata: DiskCacheMetadata?) async throws {
        let image = try CoderRegistry.shared.decode(data)
        try await store(image, data: data, forKey: key, cacheType: .disk, metadata: metadata)
    }
}
