import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage
@testable import WebImageRedis
@testable import WebImageServer

/// Redis as a tier of its own in what WebImage reports: a load or variant served from Redis says
/// so (not "disk"), and an image server's `/metrics` shows Redis's hits, misses, errors, breaker
/// state and fills.
@Suite struct RedisReportingTests {
    let origin: TestHTTPServer
    let directory = TemporaryDirectory()

    init() throws {
        origin = try TestHTTPServer()
        origin.route("/photo.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture(width: 60, height: 40)))
    }

    /// Collects the reports of one manager.
    final class Reports: WebImageObserver, @unchecked Sendable {
        // @unchecked Sendable: `events` is only touched under `lock`.
        private let lock = NSLock()
        private var events: [WebImageEvent] = []

        func observe(_ event: WebImageEvent) {
            lock.withLock { events.append(event) }
        }

        var loadSources: [ImageLoadSource] {
            lock.withLock { events.compactMap { if case .loadFinished(let report) = $0 { report.source } else { nil } } }
        }

        var variantSources: [ImageCacheSource?] {
            lock.withLock {
                events.compactMap { event -> ImageCacheSource?? in
                    guard case .variantFinished(let report) = event else { return nil }
                    return .some(report.cacheSource)
                }
            }
        }
    }

    func manager(_ name: String, redis: RedisServerProcess) -> (WebImageManager, RedisImageCache) {
        let config = RedisTierConfig(endpoints: [redis.endpoint], namespace: "reports", connectTimeout: .seconds(2), commandTimeout: .seconds(2),
                                     failureThreshold: 1, breakerCooldown: .seconds(600), fillClaimTimeToLive: .seconds(600),
                                     maxFillWait: .seconds(600))
        let local = ImageCache(directory: directory.url.appendingPathComponent(name), config: ImageCacheConfig(diskSweepInterval: nil))
        let cache = RedisImageCache(local: local, redis: config)
        return (WebImageManager(cache: cache, loader: Downloader()), cache)
    }

    @Test func loadsAndVariantsFromRedisAreReportedAsTheSharedTier() async throws {
        let redis = try await RedisServerProcess()
        let (first, _) = manager("a", redis: redis)
        let (second, _) = manager("b", redis: redis)
        let reports = Reports()
        second.observer = reports
        let url = origin.url("/photo.png")
        _ = try await first.loadImage(url: url, options: .waitStoreCache)
        _ = try await first.loadVariant(url: url, format: .exactly(.jpeg), options: .waitStoreCache)
        let image = try await second.loadImage(url: url)
        #expect(image.cacheType == .disk)
        let variant = try await second.loadVariant(url: url, format: .exactly(.jpeg))
        #expect(variant.cacheType == .disk && variant.cacheSource == .sharedTier("redis"))
        let fromOwnDisk = try await second.loadVariant(url: url, format: .exactly(.jpeg))
        #expect(fromOwnDisk.cacheType == .memory && fromOwnDisk.cacheSource == .memory)
        #expect(reports.loadSources == [.shared])
        #expect(reports.variantSources == [.sharedTier("redis"), .memory])
        #expect(origin.requestCount(for: "/photo.png") == 1)
        await first.shutdown()
        await second.shutdown()
    }

    @Test func theServersMetricsShowRedis() async throws {
        let redis = try await RedisServerProcess()
        let (filler, _) = manager("filler", redis: redis)
        let (served, _) = manager("served", redis: redis)
        let path = "/insecure/rs:fit:30:30/plain/\(origin.url("/photo.png").absoluteString)@png"
        // The filler makes the variant the server will be asked for, through its own server.
        let fillerServer = try ImageServer(manager: filler, config: ImageServerConfig(port: 0, signing: .unsigned))
        let server = try ImageServer(manager: served, config: ImageServerConfig(port: 0, signing: .unsigned))
        let (fillerPort, fillerTask) = try await fillerServer.start()
        let (port, task) = try await server.start()
        #expect(try await Self.get(fillerPort, path).status == 200)
        await filler.shutdown()   // its stores reached Redis
        #expect(try await Self.get(port, path).status == 200)
        var metrics = try await Self.get(port, "/metrics").text
        #expect(metrics.contains("webimage_results_total{tier=\"shared\"} 1"), "\(metrics)")
        #expect(metrics.contains("webimage_shared_tier_hits_total{tier=\"redis\"} 1"))
        #expect(metrics.contains("webimage_shared_tier_nodes{tier=\"redis\"} 1"))
        #expect(metrics.contains("webimage_shared_tier_open_breakers{tier=\"redis\"} 0"))

        await redis.kill()
        let other = "/insecure/rs:fit:20:20/plain/\(origin.url("/photo.png").absoluteString)@png"
        #expect(try await Self.get(port, other).status == 200, "a dead Redis only slows a load down")
        metrics = try await Self.get(port, "/metrics").text
        #expect(!metrics.contains("webimage_shared_tier_errors_total{tier=\"redis\"} 0"), "\(metrics)")
        #expect(metrics.contains("webimage_shared_tier_open_breakers{tier=\"redis\"} 1"), "\(metrics)")
        #expect(metrics.contains("webimage_shared_tier_breaker_openings_total{tier=\"redis\"} 1"))
        fillerTask.cancel()
        task.cancel()
        _ = await (fillerTask.result, task.result)
        await served.shutdown()
    }

    private static func get(_ port: UInt16, _ path: String) async throws -> (status: Int, text: String) {
        let (body, response) = try await URLSession.shared.data(from: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: body, as: UTF8.self))
    }
}
