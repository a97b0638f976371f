import Foundation
import Testing
@testable import WebImage

/// The observer: one report per load (what, from where, bytes, time per stage), the downloader's
/// fetches and refusals, retries, and the caches' evictions and sweeps.
@Suite struct ManagerObserverTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    @Test func everyLoadReportsWhereItsImageCameFromItsBytesAndItsStages() async throws {
        serve("/a.png")
        let fixture = ManagerFixture()
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let url = server.url("/a.png")
        _ = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        _ = try await fixture.manager.loadImage(url: url)
        await fixture.cache.clear(.memory)
        _ = try await fixture.manager.loadImage(url: url)
        _ = try await fixture.manager.loadImage(url: url, context: WebImageContext(thumbnailPixelSize: PixelSize(width: 8, height: 8)))

        let loads = observer.loads
        #expect(loads.map(\.source) == [.network, .memory, .disk, .derived])
        // The thumbnail is derived from the original on disk (the original is looked up on disk only).
        #expect(loads.map(\.byteCount) == [picture.count, 0, picture.count, picture.count])
        #expect(loads.allSatisfy { $0.url == url && $0.error == nil && !$0.joinedLoadUnderWay })
        #expect(loads[0].cacheKey == url.absoluteString)
        #expect(loads[0].options == .waitStoreCache)
        let network = loads[0].durations
        #expect(network.download > .zero && network.decode > .zero && network.store > .zero)
        #expect(network.total >= network.download + network.decode)
        #expect(loads[2].durations.lookup > .zero, "a disk hit's read and decode are its lookup")
        #expect(loads[3].durations.transform > .zero, "a derived thumbnail is resampled")
        #expect(loads[3].cacheKey != url.absoluteString)

        let downloads = observer.downloads
        #expect(downloads.count == 1, "one network fetch: the other loads came from the caches")
        #expect(downloads.first?.statusCode == 200 && downloads.first?.receivedBytes == picture.count && downloads.first?.error == nil)
    }

    @Test func aFailedLoadReportsItsErrorAndTheDownloaderItsRefusal() async throws {
        server.route("/missing.png", .text("no", status: 404))
        let fixture = ManagerFixture()
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let url = server.url("/missing.png")
        await #expect(throws: WebImageError.badStatusCode(404, url: url)) { try await fixture.manager.loadImage(url: url) }
        #expect(observer.loads.count == 1)
        #expect(observer.loads.first?.source == ImageLoadSource.none)
        #expect(observer.loads.first?.error == .badStatusCode(404, url: url))
        #expect(observer.downloads.first?.statusCode == 404)
        #expect(observer.downloads.first?.error == .badStatusCode(404, url: url))
    }

    @Test func retriesAreReportedWithTheAttemptThatFailed() async throws {
        server.route("/retry.png", sequence: [
            TestResponse(status: 503, body: Data("busy".utf8)),
            TestResponse(headers: [("Content-Type", "image/png")], body: picture),
        ])
        let fixture = ManagerFixture(config: WebImageManagerConfig(retryPolicy: RetryPolicy(maxAttempts: 3, initialDelay: .milliseconds(1))))
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let url = server.url("/retry.png")
        _ = try await fixture.manager.loadImage(url: url)
        #expect(observer.retries.map(\.attempt) == [1])
        #expect(observer.retries.first?.error == .badStatusCode(503, url: url))
        #expect(observer.downloads.map(\.statusCode) == [503, 200])
        #expect(observer.loads.map(\.source) == [.network])
    }

    @Test func aCallerThatJoinedALoadUnderWaySaysSo() async throws {
        server.route("/slow.png", TestResponse(headers: [("Content-Type", "image/png")], body: picture, delayBeforeHeaders: .milliseconds(300)))
        let fixture = ManagerFixture()
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let url = server.url("/slow.png")
        async let first = fixture.manager.loadImage(url: url)
        async let second = fixture.manager.loadImage(url: url)
        _ = try await (first, second)
        #expect(observer.loads.map(\.joinedLoadUnderWay).sorted { !$0 && $1 } == [false, true])
        #expect(observer.downloads.count == 1)
    }

    @Test func theCachesReportEvictionsAndSweeps() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(maxMemoryCount: 1, diskSweepInterval: nil))
        let observer = RecordingObserver()
        cache.observer = observer
        let image = try CoderRegistry.shared.decode(picture)
        try await cache.store(image, data: picture, forKey: "one", cacheType: .memory)
        try await cache.store(image, data: picture, forKey: "two", cacheType: .memory)
        #expect(observer.evictions.count == 1 && observer.evictions.first?.count == 1 && observer.evictions.first?.cost == image.cost)
        try await cache.store(image, data: picture, forKey: "three", cacheType: .disk)
        let report = await cache.removeExpiredData()
        #expect(observer.sweeps.last?.remainingCount == 1)
        #expect(observer.sweeps.last?.remainingCount == report?.remainingCount)
        cache.handleMemoryPressure()
        #expect(observer.evictions.last?.count == 1, "memory pressure evicts the one entry left")
    }

    @Test func withoutAnObserverNothingIsReportedAndRemovingOneStopsTheReports() async throws {
        serve("/b.png")
        let fixture = ManagerFixture()
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let url = server.url("/b.png")
        _ = try await fixture.manager.loadImage(url: url)
        fixture.manager.observer = nil
        #expect(fixture.cache.observer == nil && fixture.downloader.observer == nil, "the manager's cache and downloader stop reporting too")
        _ = try await fixture.manager.loadImage(url: url)
        #expect(observer.loads.count == 1)
    }
}

extension ManagerObserverTests {
    @Test func aFetchCutShortReportsTheBytesItGot() async throws {
        server.route("/short.png", TestResponse(headers: [("Content-Type", "image/png")], body: Data(count: 3000),
                                                closeAfterBodyBytes: 1200, contentLength: .exactly(3000)))
        let downloader = Downloader()
        let observer = RecordingObserver()
        downloader.observer = observer
        let url = server.url("/short.png")
        await #expect(throws: WebImageError.truncatedResponse(received: 1200, expected: 3000, url: url)) {
            try await downloader.load(ImageLoadRequest(url: url))
        }
        let report = try #require(observer.downloads.first)
        #expect(report.receivedBytes == 1200 && report.metrics.receivedBytes == 1200)
        #expect(report.statusCode == 200)
        #expect(report.metrics.transferDuration > .zero)
        await downloader.shutdown()
    }
}
