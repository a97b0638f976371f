import Foundation

/// Decides the bytes the disk tier stores for an image (SDWebImage's `SDWebImageCacheSerializer`).
public protocol CacheSerializer: Sendable {
    /// The bytes to store for `image`, given the bytes it was decoded from (`nil` for images made
    /// in memory, such as transformed ones), or `nil` to store nothing on disk.
    func data(for image: Image, originalData: Data?, key: String) -> Data?
}

/// The default serializer: the original bytes when there are some; otherwise the image encoded in
/// its source format if a coder can write it, else PNG when it has alpha, else JPEG (quality 0.9).
public struct DefaultCacheSerializer: CacheSerializer {
    /// The registry used to encode; default ``CoderRegistry/shared``.
    public let coders: CoderRegistry

    /// Creates the serializer encoding with `coders` (default ``CoderRegistry/shared``).
    public init(coders: CoderRegistry = .shared) {
        self.coders = coders
    }

    /// The original bytes, or the image encoded as described on the type; `nil` if encoding fails.
    public func data(for image: Image, originalData: Data?, key: String) -> Data? {
        if let originalData { return originalData }
        return try? coders.encode(image, as: Self.format(for: image, coders: coders))
    }

    /// The format an image without bytes is encoded in.
    static func format(for image: Image, coders: CoderRegistry) -> ImageFormat {
        if image.format != .unknown && coders.canEncode(image.format) { return image.format }
        return image.pixelFormat.hasAlpha ? .png : .jpeg
    }
}
