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
    /// Whether a ``ImageCacheType/disk`` variant's bytes came from a tier shared between processes
    /// (a ``LayeredImageCaching``'s Redis, or another process's fill) rather than this process's own
    /// disk; default `false`.
    public var isFromSharedTier = false

    /// The MIME type to send as `Content-Type`.
    public var mimeType: String { format.mimeType }

    /// Creates a variant (the manager makes them; tests and custom caches may too).
    public init(data: Data, format: ImageFormat, pixelSize: PixelSize, cacheType: ImageCacheType, entityTag: String) {
        self.data = data
        self.format = format
        self.pixelSize = pixelSize
        self.cacheType = cacheType
        self.entityTag = entityTag
    }

    /// The strong `ETag` of `data`: a 128-bit digest of exactly these bytes (not cryptographic, and
    /// about twenty times MD5's speed: a cold request's output is tagged in microseconds), 32 lower-case
    /// hex digits, quoted. Stable across processes and releases: a tag a client holds keeps
    /// matching the same bytes. Throws nothing.
    public static func entityTag(of data: Data) -> String {
        "\"" + data.withUnsafeBytes { ContentDigest.hex($0) } + "\""
    }
}
