import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import WebImage

/// Resuming cut-short downloads with `Range` and `If-Range`, against the real test server (and one
/// time-out driven directly on the operation).
@Suite struct ResumableDownloadTests {
    let server: TestHTTPServer
    let body = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) })
    let resumable: [(String, String)] = [("ETag", "\"v1\""), ("Accept-Ranges", "bytes"), ("Content-Type", "image/png")]

    init() throws {
        server = try TestHTTPServer()
    }

    /// A reply of `body` with `headers` that serves ranges.
    func reply(_ body: Data, headers: [(String, String)]) -> TestResponse {
        TestResponse(headers: headers, body: body, servesRanges: true)
    }

    /// The same reply, cut after `bytes` bytes of its body (the connection closes short of Content-Length).
    func cut(_ body: Data, after bytes: Int, headers: [(String, String)]) -> TestResponse {
        TestResponse(headers: headers, body: body, closeAfterBodyBytes: bytes, servesRanges: true)
    }

    /// Loads `path` once, expecting the cut: a truncated response.
    func loadExpectingTheCut(_ downloader: Downloader, _ path: String) async {
        await #expect {
            try await downloader.load(ImageLoadRequest(url: server.url(path)))
        } throws: { error in
            if case .truncatedResponse? = error as? WebImageError { true } else { false }
        }
    }

    // MARK: Resuming

    @Test func aCutDownloadResumesOnTheNextLoadWithRangeAndIfRange() async throws {
        server.route("/cut.png", sequence: [cut(body, after: 7_000, headers: resumable), reply(body, headers: resumable)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/cut.png")
        #expect(downloader.partials.totalBytes == 7_000)

        let response = try await downloader.load(ImageLoadRequest(url: server.url("/cut.png")))
        #expect(response.data == body)
        #expect(response.statusCode == 200)
        #expect(response.metrics.resumedBytes == 7_000)
        #expect(response.headers["content-length"] == "20000")
        #expect(response.contentType == "image/png")
        let second = try #require(server.requests(for: "/cut.png").last)
        #expect(second.headers["range"] == "bytes=7000-")
        #expect(second.headers["if-range"] == "\"v1\"")
        #expect(downloader.partials.count == 0)   // a successful download drops its kept bytes

        _ = try await downloader.load(ImageLoadRequest(url: server.url("/cut.png")))
        #expect(server.requests(for: "/cut.png").last?.headers["range"] == nil)
    }

    @Test func lastModifiedResumesWhenThereIsNoStrongETag() async throws {
        let date = "Tue, 01 Apr 2025 10:00:00 GMT"
        let headers = [("Last-Modified", date), ("ETag", "W/\"weak\""), ("Accept-Ranges", "bytes")]
        server.route("/dated.png", sequence: [cut(body, after: 5_000, headers: headers), reply(body, headers: headers)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/dated.png")
        let response = try await downloader.load(ImageLoadRequest(url: server.url("/dated.png")))
        #expect(response.data == body)
        #expect(response.metrics.resumedBytes == 5_000)
        let second = try #require(server.requests(for: "/dated.png").last)
        #expect(second.headers["range"] == "bytes=5000-")
        #expect(second.headers["if-range"] == date)
    }

    @Test func aResumedDownloadReportsProgressFromTheWholeBody() async throws {
        server.route("/progress.png", sequence: [cut(body, after: 6_000, headers: resumable), reply(body, headers: resumable)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/progress.png")
        let reports = Mutex<[ImageLoadProgress]>([])
        let response = try await downloader.load(ImageLoadRequest(url: server.url("/progress.png"))) { progress in
            reports.withLock { $0.append(progress) }
        }
        let all = reports.withLock { $0 }
        #expect(response.data == body)
        #expect(response.metrics.resumedBytes == 6_000)
        #expect(server.requests(for: "/progress.png").last?.headers["range"] == "bytes=6000-")
        #expect(all.first.map { $0.chunk.prefix(6_000) == body.prefix(6_000) } == true)   // the kept bytes come first
        #expect(all.first.map { $0.receivedBytes > 6_000 } == true)
        #expect(all.allSatisfy { $0.expectedBytes == body.count })
        #expect(all.last?.receivedBytes == body.count)
        #expect(all.reduce(Data()) { $0 + $1.chunk } == body)
    }

    @Test func aCancelledDownloadLeavesItsBytesForTheNextLoad() async throws {
        server.route("/cancelled.png", sequence: [
            TestResponse(headers: resumable, body: body, misbehavior: .stallAfterBodyBytes(9_000)),
            reply(body, headers: resumable),
        ])
        // The stall must outlast the test's own steps, however slow the machine: no idle time-out first.
        let downloader = Downloader(config: DownloaderConfig(downloadTimeout: .seconds(60) * testTimeScale, idleTimeout: .seconds(60) * testTimeScale))
        let url = server.url("/cancelled.png")
        let received = Mutex(0)
        let first = Task {
            try await downloader.load(ImageLoadRequest(url: url)) { progress in received.withLock { $0 = progress.receivedBytes } }
        }
        try await waitUntil { received.withLock { $0 } == 9_000 }
        first.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await first.value }
        try await waitUntil { downloader.partials.count == 1 }   // the shared download stops just after its last caller
        #expect(downloader.partials.totalBytes == 9_000)
        let response = try await downloader.load(ImageLoadRequest(url: url))
        #expect(response.data == body)
        #expect(server.requests(for: "/cancelled.png").last?.headers["range"] == "bytes=9000-")
    }

    @Test func aManagerRetryResumesTheCutDownload() async throws {
        let picture = try encodedPicture(width: 64, height: 48, seed: 3)
        let half = picture.count / 2
        server.route("/retried.png", sequence: [cut(picture, after: half, headers: resumable), reply(picture, headers: resumable)])
        let fixture = ManagerFixture(config: WebImageManagerConfig(retryPolicy: RetryPolicy(maxAttempts: 2, initialDelay: .milliseconds(1))))
        defer { fixture.directory.remove() }
        let url = server.url("/retried.png")
        let result = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(result.image.width == 64 && result.image.height == 48)
        #expect(result.data == picture)
        #expect(server.requestCount(for: "/retried.png") == 2)
        #expect(server.requests(for: "/retried.png").last?.headers["range"] == "bytes=\(half)-")
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == picture)
    }

    @Test func keptBytesNeverReachTheDiskCache() async throws {
        let picture = try encodedPicture(width: 64, height: 48, seed: 4)
        server.route("/never.png", cut(picture, after: picture.count / 2, headers: resumable))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        await #expect(throws: WebImageError.self) {
            try await fixture.manager.loadImage(url: server.url("/never.png"), options: .waitStoreCache)
        }
        #expect(fixture.downloader.partials.count == 1)
        #expect(await fixture.cache.diskCount() == 0)
        #expect(await fixture.cache.containsImage(forKey: server.url("/never.png").absoluteString) == .none)
    }

    /// A time-out ends a download through the same `fail` its deadline calls; driven here as the
    /// session delegate and the deadline would, so that no wall-clock guess decides when it fires.
    @Test func aTimedOutDownloadKeepsItsBytesBeforeItsCallerHears() async throws {
        let url = URL(string: "http://example.com/timed-out.png")!
        let store = PartialDownloadStore(limit: 1 << 20)
        let operation = DownloadOperation(key: url.absoluteString, request: ImageLoadRequest(url: url), sequence: 1, partials: store) { _ in }
        var request = URLRequest(url: url)
        #expect(!operation.prepareResumption(of: &request))   // takes part, nothing kept yet
        let keptWhenTheCallerHeard = Mutex<Int?>(nil)
        let added = Mutex(false)
        operation.reserve(1)
        let caller = Task {
            do {
                _ = try await withCheckedThrowingContinuation { continuation in
                    operation.addWaiter(1, continuation: continuation, progress: nil)
                    added.withLock { $0 = true }
                }
            } catch {
                keptWhenTheCallerHeard.withLock { $0 = store.totalBytes }
                throw error
            }
        }
        while !added.withLock({ $0 }) { await Task.yield() }
        let headers = ["Content-Length": "10", "ETag": "\"v1\"", "Accept-Ranges": "bytes"]
        #expect(operation.received(try #require(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: headers)),
                                   config: DownloaderConfig()))
        #expect(operation.received(Data([1, 2, 3, 4]), maxBytes: 100))
        operation.fail(.timedOut(url: url))   // what the downloader's deadline does
        await #expect(throws: WebImageError.timedOut(url: url)) { try await caller.value }
        #expect(keptWhenTheCallerHeard.withLock { $0 } == 4)
        let kept = try #require(store.take(url.absoluteString))
        #expect(kept.data == Data([1, 2, 3, 4]))
        #expect(kept.validator == .entityTag("\"v1\""))
    }

    // MARK: Starting over

    @Test func aChangedETagStartsOverCleanlyWithTheNewBody() async throws {
        let newBody = Data((0..<15_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        let changed = [("ETag", "\"v2\""), ("Accept-Ranges", "bytes")]
        server.route("/changed.png", sequence: [cut(body, after: 8_000, headers: resumable), reply(newBody, headers: changed)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/changed.png")
        let response = try await downloader.load(ImageLoadRequest(url: server.url("/changed.png")))
        #expect(response.data == newBody)
        #expect(response.metrics.resumedBytes == 0)
        let second = try #require(server.requests(for: "/changed.png").last)
        #expect(second.headers["range"] == "bytes=8000-")   // asked, and the server answered 200
        #expect(second.headers["if-range"] == "\"v1\"")
        #expect(downloader.partials.count == 0)
    }

    @Test func aServerThatIgnoresRangesStartsOverCleanly() async throws {
        var whole = TestResponse(headers: resumable, body: body)
        whole.servesRanges = false
        server.route("/ignores.png", sequence: [cut(body, after: 3_000, headers: resumable), whole])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/ignores.png")
        let response = try await downloader.load(ImageLoadRequest(url: server.url("/ignores.png")))
        #expect(response.data == body)
        #expect(response.metrics.resumedBytes == 0)
        #expect(server.requests(for: "/ignores.png").last?.headers["range"] == "bytes=3000-")
    }

    /// How a faulty server answers a range request.
    enum FaultyContinuation: String, CaseIterable, Sendable {
        case startsTooEarly, startsTooLate, otherETag, notSatisfiable
    }

    @Test(arguments: FaultyContinuation.allCases)
    func aRangeAnswerThatDoesNotContinueTheKeptBytesIsNeverJoinedToThem(_ fault: FaultyContinuation) async throws {
        let body = self.body
        let kept = 10_000
        let served = Mutex(0)
        server.route("/faulty.png") { request in
            let number = served.withLock { count in
                count += 1
                return count
            }
            if number == 1 {
                return TestResponse(headers: [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")], body: body, closeAfterBodyBytes: kept)
            }
            guard request.headers["range"] != nil else {
                return TestResponse(headers: [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")], body: body)
            }
            let start = switch fault {
            case .startsTooEarly: kept - 100
            case .startsTooLate: kept + 100
            case .otherETag, .notSatisfiable: kept
            }
            if fault == .notSatisfiable {
                return TestResponse(status: 416, headers: [("Content-Range", "bytes */\(body.count)")])
            }
            let etag = fault == .otherETag ? "\"v2\"" : "\"v1\""
            return TestResponse(status: 206, headers: [("ETag", etag), ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")],
                                body: body.subdata(in: start..<body.count))
        }
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/faulty.png")
        let response = try await downloader.load(ImageLoadRequest(url: server.url("/faulty.png")))
        #expect(response.data == body)
        #expect(response.metrics.resumedBytes == 0)
        let requests = server.requests(for: "/faulty.png")
        #expect(requests.count == 3)
        #expect(requests.dropFirst().first?.headers["range"] == "bytes=\(kept)-")
        #expect(requests.last?.headers["range"] == nil && requests.last?.headers["if-range"] == nil)
        #expect(downloader.partials.count == 0)
    }

    // MARK: When not to resume

    /// First responses whose body must not be resumed.
    enum Unresumable: String, CaseIterable, Sendable {
        case noValidator, noAcceptRanges, weakETagOnly, acceptRangesNone

        var headers: [(String, String)] {
            switch self {
            case .noValidator: [("Accept-Ranges", "bytes")]
            case .noAcceptRanges: [("ETag", "\"v1\""), ("Last-Modified", "Tue, 01 Apr 2025 10:00:00 GMT")]
            case .weakETagOnly: [("ETag", "W/\"v1\""), ("Accept-Ranges", "bytes")]
            case .acceptRangesNone: [("ETag", "\"v1\""), ("Accept-Ranges", "none")]
            }
        }
    }

    @Test(arguments: Unresumable.allCases)
    func noRangeIsSentWhenTheFirstResponseCannotBeResumed(_ first: Unresumable) async throws {
        let path = "/\(first.rawValue).png"
        server.route(path, sequence: [cut(body, after: 6_000, headers: first.headers), reply(body, headers: first.headers)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, path)
        #expect(downloader.partials.count == 0)
        let response = try await downloader.load(ImageLoadRequest(url: server.url(path)))
        #expect(response.data == body)
        #expect(server.requests(for: path).last?.headers["range"] == nil)
        #expect(server.requests(for: path).last?.headers["if-range"] == nil)
    }

    @Test func aRevalidationNeverResumes() async throws {
        server.route("/revalidated.png", sequence: [cut(body, after: 6_000, headers: resumable), reply(body, headers: resumable)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/revalidated.png")
        let request = ImageLoadRequest(url: server.url("/revalidated.png"), validators: HTTPValidators(entityTag: "\"v0\""))
        let response = try await downloader.load(request)
        #expect(response.data == body)
        let second = try #require(server.requests(for: "/revalidated.png").last)
        #expect(second.headers["if-none-match"] == "\"v0\"")
        #expect(second.headers["range"] == nil)
    }

    @Test func aRequestWithItsOwnRangeNeitherResumesNorKeepsBytes() async throws {
        server.route("/own-range.png", sequence: [cut(body, after: 6_000, headers: resumable), reply(body, headers: resumable)])
        let downloader = Downloader()
        await loadExpectingTheCut(downloader, "/own-range.png")
        let ranged = ImageLoadRequest(url: server.url("/own-range.png"), headers: ["Range": "bytes=100-199"])
        let response = try await downloader.load(ranged)
        #expect(response.data == body.subdata(in: 100..<200))
        #expect(server.requests(for: "/own-range.png").last?.headers["if-range"] == nil)
        #expect(downloader.partials.count == 1)   // still there for a plain request
    }

    // MARK: Bounded memory

    @Test func aPartialLargerThanTheLimitIsNotKept() async throws {
        server.route("/big.png", sequence: [cut(body, after: 7_000, headers: resumable), reply(body, headers: resumable)])
        let downloader = Downloader(config: DownloaderConfig(maxResumableDataBytes: 6_999))
        await loadExpectingTheCut(downloader, "/big.png")
        #expect(downloader.partials.count == 0)
        _ = try await downloader.load(ImageLoadRequest(url: server.url("/big.png")))
        #expect(server.requests(for: "/big.png").last?.headers["range"] == nil)
    }

    @Test func theLeastRecentlyKeptPartialIsDroppedPastTheLimit() async throws {
        for path in ["/first.png", "/second.png"] {
            server.route(path, sequence: [cut(body, after: 6_000, headers: resumable), reply(body, headers: resumable)])
        }
        let downloader = Downloader(config: DownloaderConfig(maxResumableDataBytes: 10_000))
        await loadExpectingTheCut(downloader, "/first.png")
        await loadExpectingTheCut(downloader, "/second.png")
        #expect(downloader.partials.keysByRecency == [server.url("/second.png").absoluteString])
        #expect(downloader.partials.totalBytes == 6_000)
        #expect(try await downloader.load(ImageLoadRequest(url: server.url("/first.png"))).data == body)
        #expect(try await downloader.load(ImageLoadRequest(url: server.url("/second.png"))).data == body)
        #expect(server.requests(for: "/first.png").last?.headers["range"] == nil)
        #expect(server.requests(for: "/second.png").last?.headers["range"] == "bytes=6000-")
    }

    @Test func aZeroLimitTurnsResumingOffAndLoweringTheLimitDropsWhatNoLongerFits() async throws {
        server.route("/off.png", sequence: [cut(body, after: 6_000, headers: resumable), reply(body, headers: resumable)])
        let downloader = Downloader()
        #expect(downloader.config.maxResumableDataBytes == 32 << 20)
        await loadExpectingTheCut(downloader, "/off.png")
        #expect(downloader.partials.count == 1)
        downloader.updateConfig { $0.maxResumableDataBytes = 0 }
        #expect(downloader.partials.count == 0)
        _ = try await downloader.load(ImageLoadRequest(url: server.url("/off.png")))
        #expect(server.requests(for: "/off.png").last?.headers["range"] == nil)
    }
}
