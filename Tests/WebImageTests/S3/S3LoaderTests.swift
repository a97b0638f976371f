import Foundation
import Testing
@testable import WebImage
@testable import WebImageS3
import WebImageWebP

/// `s3://bucket/key` sources through the manager (moto): loads, variants, revalidation by ETag,
/// and typed failures.
@Suite struct S3LoaderTests {
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()])

    func setUp() async throws -> (WebImageManager, S3Client, String, TemporaryDirectory) {
        let moto = try MotoServer.running()
        let client = S3Client(config: try moto.clientConfig())
        let bucket = try await moto.freshBucket("sources")
        let directory = TemporaryDirectory()
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let manager = WebImageManager(cache: cache, loader: LoadersManager(loaders: [Downloader(), FileLoader(), S3Loader(client: client)]),
                                      coders: Self.coders)
        return (manager, client, bucket, directory)
    }

    @Test func s3SourcesLoadAsImagesAndVariants() async throws {
        let (manager, client, bucket, directory) = try await setUp()
        defer { directory.remove() }
        try await client.put(bucket: bucket, key: "photos/a b.jpg", body: try encodedPicture(width: 90, height: 60, as: .jpeg))
        let url = try #require(URL(string: "s3://\(bucket)/photos/a%20b.jpg"))
        #expect(S3Loader(client: client).canLoad(url) && !S3Loader(client: client).canLoad(URL(string: "s3://bucket")!))
        let image = try await manager.loadImage(url: url)
        #expect(image.image.size == PixelSize(width: 90, height: 60) && image.cacheType == .none)
        let variant = try await manager.loadVariant(url: url, format: .exactly(.webp), context: WebImageContext(thumbnailPixelSize: PixelSize(width: 30, height: 30)))
        #expect(variant.format == .webp && variant.pixelSize == PixelSize(width: 30, height: 20))
        let info = try await manager.loadImageInfo(url: url)
        #expect(info.pixelSize == PixelSize(width: 90, height: 60))
    }

    @Test func aCachedCopyIsRevalidatedByItsETag() async throws {
        let (manager, client, bucket, directory) = try await setUp()
        defer { directory.remove() }
        try await client.put(bucket: bucket, key: "a.png", body: try encodedPicture(width: 20, height: 10))
        let url = try #require(URL(string: "s3://\(bucket)/a.png"))
        _ = try await manager.loadImage(url: url, options: .waitStoreCache)
        let same = try await manager.loadImage(url: url, options: .refreshCached)
        #expect(same.image.size == PixelSize(width: 20, height: 10))
        #expect(manager.statistics.notModified == 1, "the store answered 304 to If-None-Match")
        try await client.put(bucket: bucket, key: "a.png", body: try encodedPicture(width: 30, height: 10))
        let changed = try await manager.loadImage(url: url, options: .refreshCached)
        #expect(changed.image.size == PixelSize(width: 30, height: 10) && changed.cacheType == .none)
    }

    @Test func missingObjectsAndBucketsAreTypedErrors() async throws {
        let (manager, _, bucket, directory) = try await setUp()
        defer { directory.remove() }
        do {
            _ = try await manager.loadImage(url: URL(string: "s3://\(bucket)/missing.png"))
            Issue.record("a missing object loads nothing")
        } catch let error as WebImageError {
            guard case .badStatusCode(404, _, _) = error else { Issue.record("\(error)"); return }
        }
        await #expect(throws: WebImageError.self) { try await manager.loadImage(url: URL(string: "s3://no-such-bucket-\(UInt32.random(in: 0...UInt32.max))/x.png")) }
    }
}
