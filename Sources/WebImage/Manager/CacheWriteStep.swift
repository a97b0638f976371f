import Foundation

/// The one step every load path writes to a cache's disk tier with (pixels, encoded variants, image
/// facts): awaited with ``WebImageOptions/waitStoreCache`` — its failure fails the load as
/// ``WebImageError/cacheStoreFailed(_:url:)`` — else in the background, where a failure loses only
/// the disk copy and is reported as ``WebImageEvent/diskWriteFailed(key:error:)``.
struct CacheWriteStep: Sendable {
    /// Where background writes are counted (a shutdown and ``WebImageManager/flush()`` wait for them).
    let backgroundWrites: BackgroundTasks
    /// Who hears of a background write's failure.
    let observer: ObserverSlot

    /// Runs `write` for `key`: awaited when `awaited`, else in the background on `executor`.
    /// - Throws: `cacheStoreFailed` with the cache's error, for an awaited write only.
    func run(key: String, url: URL, awaited: Bool, executor: (any TaskExecutor)?,
             _ write: @escaping @Sendable () async throws -> Void) async throws(WebImageError) {
        guard awaited else {
            let observer = self.observer
            backgroundWrites.start(on: executor) {
                do {
                    try await write()
                } catch {
                    observer.emit { .diskWriteFailed(key: key, error: Self.diskCacheError(error)) }
                }
            }
            return
        }
        do {
            try await write()
        } catch {
            throw .cacheStoreFailed(Self.diskCacheError(error), url: url)
        }
    }

    /// A cache's store error as a ``DiskCacheError`` (another cache's error described as `other`).
    static func diskCacheError(_ error: any Error) -> DiskCacheError {
        error as? DiskCacheError ?? .other("\(error)")
    }
}
