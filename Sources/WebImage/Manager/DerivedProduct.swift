import Foundation

/// Something the manager makes from an image and keeps under a key of its own (an encoded
/// ``ImageVariant``, ``ImageInfo``): what a ``DerivedProductStore`` needs to keep it in memory, write
/// it to a cache as bytes and read it back.
protocol DerivedProduct: Sendable {
    /// The product read back from the bytes it was stored as, answered as coming from `stored`'s
    /// tier (``ImageCacheType/disk``); `nil` when they are not one (it is made again).
    init?(stored: CachedData)
    /// The bytes and metadata it is stored as; `nil` when it cannot be.
    func storedForm() -> (data: Data, metadata: DiskCacheMetadata?)?
    /// Its cost in the memory tier.
    var memoryCost: Int { get }
    /// The product as answered from the memory tier.
    var answeredFromMemory: Self { get }
}

/// What a ``DerivedProductStore``'s coalescer shares among the callers of one key: the product and
/// how long making it took (zero for another process's fill).
struct MadeProduct<Product: DerivedProduct>: Sendable {
    var product: Product
    var duration: Duration
}

extension ImageVariant: DerivedProduct {
    /// A variant from stored bytes, or `nil` when their format is not recognised or their size was not stored.
    init?(stored: CachedData) {
        guard let pixelSize = stored.metadata?.pixelSize else { return nil }
        let format = ImageFormat(sniffing: stored.data)
        guard format != .unknown else { return nil }
        let tag = stored.metadata?.entityTag ?? ImageVariant.entityTag(of: stored.data)
        self.init(data: stored.data, format: format, pixelSize: pixelSize, cacheType: .disk, entityTag: tag)
        cacheSource = stored.source
    }

    /// The bytes, with their ETag and pixel size as metadata (read back by ``init(stored:)``).
    func storedForm() -> (data: Data, metadata: DiskCacheMetadata?)? {
        (data, DiskCacheMetadata(entityTag: entityTag, pixelSize: pixelSize))
    }

    /// The encoded size.
    var memoryCost: Int { data.count }

    var answeredFromMemory: ImageVariant {
        var kept = self
        kept.cacheType = .memory
        kept.cacheSource = .memory
        return kept
    }
}

extension ImageInfo: DerivedProduct {
    /// Facts from their stored JSON document, or `nil` when it does not parse.
    init?(stored: CachedData) {
        guard let info = try? JSONDecoder().decode(ImageInfo.self, from: stored.data) else { return nil }
        self = info
        cacheType = .disk
    }

    /// The JSON document (``cacheType`` left out).
    func storedForm() -> (data: Data, metadata: DiskCacheMetadata?)? {
        (try? JSONEncoder().encode(self)).map { ($0, nil) }
    }

    /// One entry (the facts' memory tier is limited by count).
    var memoryCost: Int { 1 }

    var answeredFromMemory: ImageInfo {
        var kept = self
        kept.cacheType = .memory
        return kept
    }
}
