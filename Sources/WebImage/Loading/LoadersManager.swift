import Foundation
import Synchronization

/// Several loaders behind one ``ImageLoader`` (SDWebImage's `SDImageLoadersManager`): each URL goes
/// to the most recently added loader that can load it.
public final class LoadersManager: ImageLoader {
    /// The manager ``WebImageManager/shared`` uses: ``Downloader/shared`` and a ``FileLoader``.
    public static let shared = LoadersManager()

    private let storage: Mutex<[any ImageLoader]>

    /// Creates a manager over `loaders` (the last one asked first); default ``Downloader/shared``
    /// and ``FileLoader``.
    public init(loaders: [any ImageLoader] = [Downloader.shared, FileLoader()]) {
        storage = Mutex(loaders)
    }

    /// The loaders, in the order they were added.
    public var loaders: [any ImageLoader] { storage.withLock { $0 } }

    /// Adds `loader`; it is asked before every loader added earlier.
    public func add(_ loader: any ImageLoader) {
        storage.withLock { $0.append(loader) }
    }

    /// Removes every loader of type `type`.
    public func remove<Loader: ImageLoader>(_ type: Loader.Type) {
        storage.withLock { $0.removeAll { $0 is Loader } }
    }

    /// The loader that will load `url`, or `nil`.
    public func loader(for url: URL) -> (any ImageLoader)? {
        loaders.last { $0.canLoad(url) }
    }

    /// Whether any loader can load `url`.
    public func canLoad(_ url: URL) -> Bool {
        loader(for: url) != nil
    }

    /// Loads with the chosen loader.
    /// - Throws: ``WebImageError/invalidURL(_:)`` when no loader can load the URL, otherwise what the
    ///   loader throws.
    public func load(_ request: ImageLoadRequest, progress: ImageLoadProgressHandler? = nil) async throws -> ImageLoadResponse {
        guard let loader = loader(for: request.url) else { throw WebImageError.invalidURL(request.url.absoluteString) }
        return try await loader.load(request, progress: progress)
    }

    /// Shuts down every loader (``ImageLoader/shutdown()``), in the order they were added.
    public func shutdown() async {
        for loader in loaders { await loader.shutdown() }
    }
}

extension LoadersManager: ObservableLoader {
    func setObserver(_ observer: (any WebImageObserver)?) {
        for loader in loaders { (loader as? any ObservableLoader)?.setObserver(observer) }
    }
}
