import Foundation
import Testing
@testable import WebImage

/// Shutting down: new loads refused, loads in flight finished or cancelled, background disk writes
/// flushed, timers stopped; the structured `run()` entry points; and a process that exits right
/// after a shutdown keeps its images on disk.
@Suite struct ManagerLifecycleTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    @Test func afterShutdownEveryLoadIsRefusedEvenAMemoryHit() async throws {
        serve("/a.png")
        let fixture = ManagerFixture()
        let url = server.url("/a.png")
        _ = try await fixture.manager.loadImage(url: url)
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) != nil)
        await fixture.manager.shutdown()
        #expect(fixture.manager.isShutDown)
        await #expect(throws: WebImageError.shutDown(url: url)) { try await fixture.manager.loadImage(url: url) }
        await #expect(throws: WebImageError.shutDown(url: url)) { try await fixture.downloader.load(ImageLoadRequest(url: url)) }
        #expect(server.requestCount(for: "/a.png") == 1)
        await fixture.manager.shutdown()   // a second call returns at once
    }

    @Test func loadsInFlightFinishByDefault() async throws {
        server.route("/slow.png", TestResponse(headers: [("Content-Type", "image/png")], body: picture, delayBeforeHeaders: .milliseconds(300)))
        let fixture = ManagerFixture()
        let url = server.url("/slow.png")
        let load = Task { try await fixture.manager.loadImage(url: url) }
        try await waitUntil { fixture.manager.isRunning }
        await fixture.manager.shutdown()
        #expect(!fixture.manager.isRunning)
        let result = try await load.value
        #expect(result.image.width == 64)
        #expect(FileManager.default.fileExists(atPath: try #require(fixture.cache.cachePath(forKey: url.absoluteString))),
                "the load's background disk write is flushed by the shutdown")
    }

    @Test func loadsInFlightAreCancelledWhenTheCallerSaysSo() async throws {
        // Stuck for five minutes: a shutdown that waited for the server would take that long; one that cancels
        // is far below the bound even on a busy machine (it once took 21 s under a full suite, past a 20 s bound).
        server.route("/stuck.png", TestResponse(headers: [("Content-Type", "image/png")], body: picture, delayBeforeHeaders: .seconds(300)))
        let fixture = ManagerFixture()
        let url = server.url("/stuck.png")
        let load = Task { try await fixture.manager.loadImage(url: url) }
        try await waitUntil { fixture.manager.isRunning }
        let started = ContinuousClock.now
        await fixture.manager.shutdown(loadsInFlight: .cancel)
        await #expect(throws: WebImageError.cancelled(url: url)) { try await load.value }
        #expect(ContinuousClock.now - started < .seconds(120) * testTimeScale, "the shutdown did not wait for the stuck server")
    }

    @Test func imageCacheFlushWaitsForItsBackgroundStores() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let image = try CoderRegistry.shared.decode(picture)
        for index in 0..<20 { cache.storeInBackground(image, data: picture, forKey: "key\(index)") }
        await cache.flush()
        #expect(await cache.diskCount() == 20)
    }

    @Test func runReturnsWhenItsTaskIsCancelledAndShutsTheManagerDown() async throws {
        let fixture = ManagerFixture()
        let running = Task { await fixture.manager.run() }
        try await Task.sleep(for: .milliseconds(20))
        #expect(!fixture.manager.isShutDown)
        running.cancel()
        await running.value
        #expect(fixture.manager.isShutDown)
    }

    @Test func imageCacheRunSweepsInTheCallersTaskUntilCancelled() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: .milliseconds(20)))
        let observer = RecordingObserver()
        cache.observer = observer
        let running = Task { await cache.run() }
        try await waitUntil { observer.sweeps.count >= 3 }
        #expect(observer.sweeps.count >= 3)
        running.cancel()
        await running.value
        let afterRun = observer.sweeps.count
        try await Task.sleep(for: .milliseconds(100))
        #expect(observer.sweeps.count == afterRun, "sweeping stops with run(): the cache's own timer does not come back")
    }

    @Test func aMemoryPressureMonitorRunsUntilCancelledOrItsCacheShutsDown() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil))
        let cancelled = MemoryPressureMonitor(cache: cache, interval: .milliseconds(5))
        let first = Task { await cancelled.run() }
        first.cancel()
        await first.value
        let monitor = MemoryPressureMonitor(cache: cache, interval: .milliseconds(5))
        let second = Task { await monitor.run() }
        await cache.shutdown()
        await second.value
        #expect(cache.isShutDown)
    }

    /// The issue's acceptance test: a process that loads, shuts down as documented and exits at once
    /// has the image on disk. `webimage fetch` stores in the background and calls `shutdown()`
    /// before it exits; without the shutdown the 4.6 MB write would still be under way at exit.
    @Test func aProcessThatExitsRightAfterShutdownHasTheImageOnDisk() async throws {
        let bytes = try await offThePool { try Self.noisyJPEG(width: 5120, height: 2880) }
        #expect(bytes.count > 4_000_000, "a write that takes a while: \(bytes.count) bytes")
        server.route("/big.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: bytes))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let url = server.url("/big.jpg")
        let outcome = try await ChildProcess.run(["fetch", "--cache-dir", directory.url.path, url.absoluteString])
        #expect(outcome.exitedCleanly, "\(outcome.errorText)")
        let path = directory.url.path + "/" + DiskCacheFileName.make(forKey: url.absoluteString)
        #expect(FileManager.default.contents(atPath: path) == bytes)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix(DiskFile.temporaryPrefix) }
        #expect(leftovers.isEmpty, "no half-written file")
    }
}

extension ManagerLifecycleTests {
    /// A JPEG of `width` x `height` pixels of noise at quality 0.95: noise barely compresses, so
    /// 5120 x 2880 gives several megabytes, as big as a large photo.
    static func noisyJPEG(width: Int, height: Int) throws -> Data {
        var random = SplitMix(seed: 25)
        let count = width * height * 3
        let pixels = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            while index < count {
                var word = random.next() & 0x3F3F_3F3F_3F3F_3F3F   // mid-grey noise of 64 levels
                for _ in 0..<8 where index < count {
                    buffer[index] = UInt8(truncatingIfNeeded: word) &+ 96
                    word >>= 8
                    index += 1
                }
            }
            initialized = count
        }
        let image = try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
        return try JPEGCoder().encode(image, as: .jpeg, options: EncodeOptions(compressionQuality: 0.95))
    }

    @Test func loadsRacingAShutdownAreRefusedOrFinishAndNoneOutlivesIt() async throws {
        serve("/race.png")
        for round in 0..<5 {
            let fixture = ManagerFixture()
            let loads = (0..<6).map { index in
                Task { try await fixture.manager.loadImage(url: server.url("/race.png?\(round)-\(index)")) }
            }
            await fixture.manager.shutdown()
            #expect(!fixture.manager.isRunning, "the shutdown waited for every load it let in")
            for load in loads {
                do {
                    _ = try await load.value
                } catch let error as WebImageError {
                    guard case .shutDown = error else { Issue.record("unexpected \(error)"); continue }
                }
            }
        }
    }
}
