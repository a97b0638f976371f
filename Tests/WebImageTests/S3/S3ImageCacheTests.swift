import Foundation
import Testing
@testable import WebImage
@testable import WebImageS3
@testable import WebImageRedis
@testable import WebImageServer
import WebImageWebP

/// The object store as a tier behind the manager's caches (moto): a hit promoted into the faster
/// tiers, stores in the background, variants shared between processes, and a failing store that
/// makes loads slower but never fails them.
@Suite struct S3ImageCacheTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder()])

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture(width: 120, height: 80, as: .jpeg)
    }

    /// A manager whose cache is a fresh disk in front of the store.
    func manager(store: S3Tier) -> (WebImageManager, S3ImageCache, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        let local = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let cache = S3ImageCache(inner: local, store: store)
        let manager = WebImageManager(cache: cache, loader: LoadersManager(loaders: [Downloader(), FileLoader()]), coders: Self.coders)
        return (manager, cache, directory)
    }

    func motoTier(_ name: String) async throws -> S3Tier {
        let moto = try MotoServer.running()
        return S3Tier(config: try S3TierConfig(client: moto.clientConfig(), bucket: try await moto.freshBucket(name), sweepInterval: nil))
    }

    @Test func anotherProcessWithAnEmptyDiskGetsImagesAndVariantsFromTheStore() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let store = try await motoTier("layers")
        let url = server.url("/photo.jpg")
        let thumbnail = WebImageContext(thumbnailPixelSize: PixelSize(width: 32, height: 32))
        let (first, firstCache, firstDirectory) = manager(store: store)
        defer { firstDirectory.remove() }
        // .waitStoreCache: each store reaches the cache before the call returns; the cache's PUTs
        // then run in the background, and a flush waits for them.
        let cold = try await first.loadVariant(url: url, format: .exactly(.webp), options: .waitStoreCache, context: thumbnail)
        #expect(cold.cacheType == .none)
        _ = try await first.loadImage(url: url, options: .waitStoreCache)
        await firstCache.flush()
        #expect(store.statistics.stores >= 2, "the original's bytes and the variant")

        let (second, _, secondDirectory) = manager(store: store)
        defer { secondDirectory.remove() }
        let variant = try await second.loadVariant(url: url, format: .exactly(.webp), context: thumbnail)
        #expect(variant.cacheType == .disk && variant.cacheSource == .sharedTier("s3") && variant.data == cold.data && variant.entityTag == cold.entityTag)
        let image = try await second.loadImage(url: url)
        #expect(image.cacheType == .disk && image.image.size == PixelSize(width: 120, height: 80))
        #expect(server.requestCount(for: "/photo.jpg") == 1, "the origin served the URL once for both processes")
        #expect(second.statistics.downloads == 0 && second.statistics.encodes == 0)
        let promoted = try await second.loadVariant(url: url, format: .exactly(.webp), context: thumbnail)
        #expect(promoted.cacheType == .memory, "promoted into the faster tiers")
        let hitsBefore = store.statistics.hits
        let (third, _, thirdDirectory) = manager(store: store)
        defer { thirdDirectory.remove() }
        _ = try await third.loadVariant(url: url, format: .exactly(.webp), context: thumbnail)
        #expect(store.statistics.hits == hitsBefore + 1, "one GET per hit, no HEAD first")
    }

    @Test func aFailingStoreMakesLoadsSlowerNeverFailed() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let failing = try TestHTTPServer()
        failing.route("/bucket") { _ in TestResponse(status: 503, body: Data("<Error><Code>SlowDown</Code></Error>".utf8)) }
        let config = try S3ClientConfig(endpoint: failing.url("/"), credentials: S3Credentials(accessKeyID: "a", secretAccessKey: "b"),
                                        timeout: .milliseconds(500), retries: 1, retryBaseDelay: .milliseconds(5), breakerThreshold: 100)
        let store = S3Tier(config: try S3TierConfig(client: config, bucket: "bucket", sweepInterval: nil))
        let (manager, cache, directory) = manager(store: store)
        defer { directory.remove() }
        let url = server.url("/photo.jpg")
        let image = try await manager.loadImage(url: url, options: .waitStoreCache)
        #expect(image.cacheType == .none && image.image.size == PixelSize(width: 120, height: 80))
        // .waitStoreCache: the variant reaches the cache before the call returns (the manager's own
        // background store could otherwise reach it after the flush below, which waits only for the
        // cache's writes to the store: under load the store's PUT was not yet counted).
        let variant = try await manager.loadVariant(url: url, format: .exactly(.png), options: .waitStoreCache,
                                                    context: WebImageContext(thumbnailPixelSize: PixelSize(width: 10, height: 10)))
        #expect(variant.format == .png)
        await cache.flush()
        #expect(store.statistics.errors >= 2 && store.statistics.hits == 0, "every call failed and was counted: \(store.statistics)")
        #expect(try await manager.loadImage(url: url).cacheType == .memory, "the local tiers work as ever")
    }

    @Test func undecodableBytesInTheStoreAreAMissAndAreDeleted() async throws {
        serve("/photo.jpg", headers: [("Content-Type", "image/jpeg")])
        let store = try await motoTier("junk")
        let url = server.url("/photo.jpg")
        #expect(await store.setValue(Data("not an image".utf8), metadata: nil, forKey: url.absoluteString))
        let (manager, _, directory) = manager(store: store)
        defer { directory.remove() }
        var local = WebImageContext()
        local.storeCacheType = .memory   // the junk is not kept on this disk: decoded straight from the store
        let loaded = try await manager.loadImage(url: url, context: local)
        #expect(loaded.cacheType == .none, "a miss: the origin answered")
        #expect(server.requestCount(for: "/photo.jpg") == 1)
    }
}

/// The object store in `/metrics`, beside Redis when Redis is in front.
@Suite struct S3ReportingTests {
    @Test func theStoreIsReportedAfterTheTiersInFrontOfIt() async throws {
        let moto = try MotoServer.running()
        let redis = try await RedisServerProcess()
        let tier = S3Tier(config: try S3TierConfig(client: moto.clientConfig(), bucket: try await moto.freshBucket("report"), sweepInterval: nil))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let inner = RedisImageCache(local: ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil)),
                                    redis: RedisTierConfig(endpoints: [redis.endpoint], namespace: "report"))
        let cache = S3ImageCache(inner: inner, store: tier)
        #expect(await tier.setValue(Data("bytes".utf8), metadata: nil, forKey: "k"))
        #expect(try await cache.cachedData(forKey: "k")?.data == Data("bytes".utf8))
        #expect(try await cache.cachedData(forKey: "missing") == nil)
        let reports = cache.sharedTierReports
        #expect(reports.map(\.name) == ["redis", "s3"])
        #expect(reports[1].hits == 1 && reports[1].misses == 1 && reports[1].nodes == 1 && reports[1].openBreakers == 0)
        let text = ServerMetrics().render(shared: reports)
        #expect(text.contains("webimage_shared_tier_hits_total{tier=\"s3\"} 1") && text.contains("webimage_shared_tier_hits_total{tier=\"redis\"}"))
        #expect(text.components(separatedBy: "# TYPE webimage_shared_tier_hits_total counter").count == 2, "each family once")
        await cache.shutdown()
    }
}
