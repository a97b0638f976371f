import Foundation

/// Fetches the bytes of an image (SDWebImage's `SDImageLoader`): the ``Downloader`` over HTTP, the
/// ``FileLoader`` for `file:` and `data:` URLs, or your own (an S3 client, a database).
public protocol ImageLoader: Sendable {
    /// Whether this loader can fetch `url` (by its scheme, usually).
    func canLoad(_ url: URL) -> Bool

    /// Fetches `request.url`, reporting each chunk to `progress` as it arrives.
    /// - Returns: the whole body and the response's metadata.
    /// - Throws: ``WebImageError``; a cancelled caller gets ``WebImageError/cancelled(url:)`` at once.
    func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler?) async throws -> ImageLoadResponse

    /// Stops for good: loads under way are cancelled, later ones throw ``WebImageError/shutDown(url:)``,
    /// connections are closed. ``WebImageManager/shutdown(loadsInFlight:)`` calls it. Default: nothing
    /// (a loader that holds nothing open).
    func shutdown() async
}

extension ImageLoader {
    /// Holds nothing open: does nothing.
    public func shutdown() async {}
}
