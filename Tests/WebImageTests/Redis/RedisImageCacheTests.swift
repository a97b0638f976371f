import Foundation
import Testing
@testable import WebImage
@testable import WebImageRedis

/// Several managers (as several processes would be), each with its own memory and disk tiers, one
/// real Redis, one origin.
@Suite struct RedisImageCacheTests {
    let origin: TestHTTPServer
    let directory = TemporaryDirectory()

    init() throws {
        origin = try TestHTTPServer()
        for index in 0..<12 {
            var response = TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture(width: 40 + index, height: 30, seed: index))
            response.delayBeforeHeaders = .milliseconds(100)   // long enough for every manager to be waiting
            origin.route("/\(index).png", response)
        }
        origin.route("/missing.png", TestResponse(status: 404, headers: [("Content-Type", "text/plain")], body: Data("no".utf8),
                                                  delayBeforeHeaders: .milliseconds(200)))
    }

    /// A manager with a local cache of its own over `redis`.
    func manager(_ name: String, redis: RedisServerProcess, _ change: (inout RedisTierConfig) -> Void = { _ in }) -> (WebImageManager, RedisImageCache) {
        // Claims and waits for another manager's fill are bounded by the test's own time, not 10 s: a
        // busy CI machine may take longer than that to finish a fetch.
        var config = RedisTierConfig(endpoints: [redis.endpoint], namespace: "fleet", connectTimeout: .seconds(2), commandTimeout: .seconds(5),
                                     fillClaimTimeToLive: .seconds(600), maxFillWait: .seconds(600))
        change(&config)
        let local = ImageCache(directory: directory.url.appendingPathComponent(name), config: ImageCacheConfig(diskSweepInterval: nil))
        let cache = RedisImageCache(local: local, redis: config)
        return (WebImageManager(cache: cache, loader: Downloader()), cache)
    }

    @Test func aRedisHitIsPromotedIntoTheLocalTiersWithoutTheOrigin() async throws {
        let redis = try await RedisServerProcess()
        let (first, _) = manager("a", redis: redis)
        let (second, secondCache) = manager("b", redis: redis)
        let url = origin.url("/0.png")
        let loaded = try await first.loadImage(url: url, options: .waitStoreCache)
        #expect(loaded.cacheType == .none && loaded.image.width == 40)
        #expect(try redis.keyCount() == 1, "the store reached Redis before the load returned (.waitStoreCache)")
        let shared = try await second.loadImage(url: url)
        #expect(shared.cacheType == .disk && shared.image.width == 40)
        #expect(origin.requestCount(for: "/0.png") == 1)
        #expect(secondCache.localCache.imageFromMemory(forKey: url.absoluteString) != nil, "promoted to memory at once")
        await secondCache.flush()   // the bytes reach the local disk in the background, not written and read back
        #expect(await secondCache.localCache.diskImageExists(forKey: url.absoluteString), "promoted to the local disk")
        let again = try await second.loadImage(url: url)
        #expect(again.cacheType == .memory)
        #expect(secondCache.shared.statistics.hits == 1)
        #expect(secondCache.localTimeSpent > .zero && secondCache.shared.statistics.timeSpent > .zero, "time per tier")
        await first.shutdown()
        await second.shutdown()
    }

    @Test func bytesThisProcessCannotKeepStayInRedisAndBytesNoCoderReadsAreDeleted() async throws {
        let redis = try await RedisServerProcess()
        let (_, cache) = manager("limits", redis: redis)
        let picture = try encodedPicture(width: 40, height: 30)
        await cache.shared.setValue(picture, metadata: nil, forKey: "big")
        await cache.shared.setValue(Data("not an image at all".utf8), metadata: nil, forKey: "junk")
        let tooSmall = ImageCacheQuery(decodeOptions: DecodeOptions(pixelCountLimit: 100))
        #expect(try await cache.query(forKey: "big", query: tooSmall) == nil, "this process's pixel limit refuses it")
        #expect(await cache.shared.containsValue(forKey: "big"), "but the fleet's copy stays")
        #expect(try await cache.query(forKey: "big", query: ImageCacheQuery())?.image.width == 40)
        #expect(try await cache.query(forKey: "junk", query: ImageCacheQuery()) == nil)
        #expect(await cache.shared.containsValue(forKey: "junk") == false, "bytes no coder reads are deleted")
    }

    @Test func aSerializerThatStoresNothingEndsTheClaim() async throws {
        let redis = try await RedisServerProcess()
        let (manager, cache) = manager("serializer", redis: redis)
        var context = WebImageContext()
        context.cacheSerializer = NothingSerializer()
        let url = origin.url("/5.png")
        _ = try await manager.loadImage(url: url, options: .waitStoreCache, context: context)
        #expect(cache.shared.statistics.fillsClaimed == 1)
        let claimKey = try #require(cache.shared.redisKey(forKey: url.absoluteString)) + ":fill"
        #expect(try redis.command(["EXISTS", claimKey]) == .integer(0), "released, not left to expire")
        await manager.shutdown()
    }

    @Test func managersMissingTheSameURLsAtOnceFetchEachFromTheOriginOnce() async throws {
        let redis = try await RedisServerProcess()
        let fleet = (0..<3).map { manager("m\($0)", redis: redis) }
        let urls = (0..<12).map { origin.url("/\($0).png") }
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for (manager, _) in fleet {
                for url in urls { group.addTask { try await manager.loadImage(url: url).image.width } }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(widths.count == 36 && widths.sorted() == (0..<12).flatMap { [40 + $0, 40 + $0, 40 + $0] }.sorted())
        for index in 0..<12 { #expect(origin.requestCount(for: "/\(index).png") == 1, "/\(index).png") }
        let claimed = fleet.reduce(0) { $0 + $1.1.shared.statistics.fillsClaimed }
        let fromCache = fleet.reduce(0) { $0 + $1.0.statistics.diskHits }
        #expect(claimed == 12 && fromCache == 24, "one claim per URL, \(claimed); the other loads read Redis, \(fromCache)")
        for (manager, _) in fleet { await manager.shutdown() }
    }

    @Test func variantsAreEncodedOnceForTheFleet() async throws {
        let redis = try await RedisServerProcess()
        let fleet = (0..<3).map { manager("v\($0)", redis: redis) }
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 20, height: 20))
        let url = origin.url("/3.png")
        let sizes = try await withThrowingTaskGroup(of: PixelSize.self) { group in
            for (manager, _) in fleet {
                group.addTask { try await manager.loadVariant(url: url, format: .exactly(.jpeg), context: context).pixelSize }
            }
            return try await group.reduce(into: [PixelSize]()) { $0.append($1) }
        }
        #expect(sizes == Array(repeating: PixelSize(width: 20, height: 14), count: 3))
        #expect(fleet.reduce(0) { $0 + $1.0.statistics.encodes } == 1, "one encode in the fleet")
        #expect(origin.requestCount(for: "/3.png") == 1)
        for (manager, _) in fleet { await manager.shutdown() }
    }

    /// Facts are a derived product like variants (one store shape): the fleet's fill claim on their key
    /// lets one manager decode the image while the others read its document.
    @Test func imageFactsAreComputedOnceForTheFleet() async throws {
        let redis = try await RedisServerProcess()
        let fleet = (0..<3).map { manager("i\($0)", redis: redis) }
        let url = origin.url("/4.png")
        let widths = try await withThrowingTaskGroup(of: Int.self) { group in
            for (manager, _) in fleet { group.addTask { try await manager.loadImageInfo(url: url).pixelSize.width } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(widths == [44, 44, 44])
        #expect(fleet.reduce(0) { $0 + $1.0.statistics.decodes } == 1, "one decode in the fleet: the others read the facts' document")
        #expect(fleet.reduce(0) { $0 + $1.0.statistics.sharedFills } == 2)
        #expect(origin.requestCount(for: "/4.png") == 1)
        for (manager, _) in fleet { await manager.shutdown() }
    }

    @Test func aFailedFetchEndsItsClaimSoTheOthersDoNotWaitOutTheirLimit() async throws {
        let redis = try await RedisServerProcess()
        let (first, firstCache) = manager("a", redis: redis) { $0.maxFillWait = .seconds(600) }
        let (second, secondCache) = manager("b", redis: redis) { $0.maxFillWait = .seconds(600) }
        let url = origin.url("/missing.png")
        async let one: Void = { _ = try? await first.loadImage(url: url) }()
        let deadline = ContinuousClock.now + busyMachineBound
        while firstCache.shared.statistics.fillsClaimed == 0 {
            guard ContinuousClock.now < deadline else { Issue.record("the first manager never claimed the fill"); return }
            try await Task.sleep(for: .milliseconds(5))
        }
        await #expect(throws: WebImageError.self) { try await second.loadImage(url: url) }
        await one
        #expect(secondCache.shared.statistics.fillsClaimed == 1 && secondCache.shared.statistics.fillWaitsTimedOut == 0,
                "the second claimed it once the first gave up")
        #expect(origin.requestCount(for: "/missing.png") == 2)
        await first.shutdown()
        await second.shutdown()
    }

    @Test func loadsKeepSucceedingWhileRedisIsKilledAndTheTierComesBack() async throws {
        let redis = try await RedisServerProcess()
        let (manager, cache) = manager("k", redis: redis) {
            $0.connectTimeout = .milliseconds(200)
            $0.commandTimeout = .milliseconds(200)
            $0.breakerCooldown = .milliseconds(100)
        }
        for index in 0..<4 { _ = try await manager.loadImage(url: origin.url("/\(index).png"), options: .waitStoreCache) }
        #expect(try redis.keyCount() == 4)
        await redis.kill()
        for index in 4..<8 {
            let result = try await manager.loadImage(url: origin.url("/\(index).png"), options: .waitStoreCache)
            #expect(result.image.width == 40 + index)
        }
        #expect(cache.shared.statistics.errors > 0)
        try await redis.start()
        var stored = 0
        let deadline = ContinuousClock.now + busyMachineBound
        var index = 8
        while stored == 0, ContinuousClock.now < deadline, index < 12 {
            _ = try await manager.loadImage(url: origin.url("/\(index).png"), options: .waitStoreCache)
            stored = try redis.keyCount()
            index += 1
            if stored == 0 { try await Task.sleep(for: .milliseconds(150)) }
        }
        #expect(stored >= 1, "stores reach the restarted Redis")
        await manager.shutdown()
    }
}

/// A serializer that keeps nothing on disk.
struct NothingSerializer: CacheSerializer {
    func data(for image: Image, originalData: Data?, key: String) -> Data? { nil }
}
