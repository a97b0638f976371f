import Foundation

/// The encoded bytes of an image as a client should receive them: a URL's image, fitted,
/// transformed and encoded as asked (``WebImageManager/loadVariant(url:format:encoding:options:context:)``).
public struct ImageVariant: Sendable, Hashable {
    /// The encoded bytes.
    public var data: Data
    /// Their format.
    public var format: ImageFormat
    /// The encoded image's size in pixels (upright).
    public var pixelSize: PixelSize
    /// Where the bytes came from: ``ImageCacheType/memory`` or ``ImageCacheType/disk`` for a stored
    /// variant (nothing was decoded or encoded), ``ImageCacheType/none`` when they were encoded now.
    public var cacheType: ImageCacheType
    /// A strong validator of exactly these bytes, quoted for an HTTP `ETag` header: the same bytes
    /// always have the same tag (in every process), and a new source or other parameters that change
    /// the bytes change it.
    public var entityTag: String
    /// The tier a stored variant's bytes came from: the memory tier, this process's disk, or a tier
    /// shared between processes, named (a ``LayeredImageCache``'s Redis, or another process's fill);
    /// `nil` (the default) when they were encoded now.
    public var cacheSource: ImageCacheSource?

    /// Whether the bytes came from a tier shared between processes.
    @available(*, deprecated, message: "use cacheSource (cacheSource?.isSharedTier), which names the tier")
    public var isFromSharedTier: Bool {
        get { cacheSource?.isSharedTier ?? false }
        set { cacheSource = .settingLegacyFlag(newValue, on: cacheSource, cacheType: cacheType) }
    }

    /// The MIME type to send as `Content-Type`.
    public var mimeType: String { format.mimeType }

    /// Creates a variant (the manager makes them; tests and custom caches may too).
    public init(data: Data, format: ImageFormat, pixelSize: PixelSize, cacheType: ImageCacheType, entityTag: String) {
        self.data = data
        self.format = format
        self.pixelSize = pixelSize
        self.cacheType = cacheType
        self.entityTag = entityTag
        self.cacheSource = cacheType == .none ? nil : cacheType == .memory ? .memory : .disk
    }

    /// The strong `ETag` of `data`: a 128-bit digest of exactly these bytes (not cryptographic, and
    /// about twenty times MD5's speed: a cold request's output is tagged in microseconds), 32 lower-case
    /// hex digits, quoted. Stable across processes and releases: a tag a client holds keeps
    /// matching the same bytes. Throws nothing.
    public static func entityTag(of data: Data) -> String {
        "\"" + data.withUnsafeBytes { ContentDigest.hex($0) } + "\""
    }
}
