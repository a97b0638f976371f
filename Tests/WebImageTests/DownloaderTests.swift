import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import Testing
@testable import WebImage

/// Holds server replies until the test opens it (handlers run on the server's own threads, so they may block).
final class Gate: Sendable {
    private let isOpen = Mutex(false)

    func wait() {
        while !isOpen.withLock({ $0 }) { usleep(1000) }
    }

    func open() {
        isOpen.withLock { $0 = true }
    }
}

@Suite struct DownloaderTests {
    let server: TestHTTPServer
    let body = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

    init() throws {
        server = try TestHTTPServer()
    }

    /// `config` with time-outs far beyond any wait of these tests (ten minutes, scaled), so that a
    /// reply held behind a gate on a slow or loaded machine is never cut off by the downloader's
    /// 15-second default: these tests are about order and sharing, not time-outs.
    static func patient(_ config: DownloaderConfig = DownloaderConfig()) -> DownloaderConfig {
        var config = config
        config.downloadTimeout = .seconds(600) * testTimeScale
        config.idleTimeout = .seconds(600) * testTimeScale
        return config
    }

    func slow(_ delay: Duration = .milliseconds(300)) -> TestResponse {
        TestResponse(body: body, delayBeforeHeaders: delay)
    }

    @Test func hundredConcurrentCallersShareOneRequest() async throws {
        let gate = Gate()
        gatedRoutes(["/shared.bin"], gate: gate, body: body)
        let downloader = Downloader(config: Self.patient())
        let url = server.url("/shared.bin")
        let tasks = (0..<100).map { _ in Task { try await downloader.load(ImageLoadRequest(url: url)).data } }
        try await waitUntil { downloader.callerCount(for: ImageLoadRequest(url: url)) == 100 }
        gate.open()
        for task in tasks { #expect(try await task.value == body) }
        #expect(server.requestCount(for: "/shared.bin") == 1)
        #expect(downloader.startedDownloadCount == 1)
    }

    @Test func twoHundredJoinersOnOneURLAreAllServed() async throws {
        server.route("/joiners.bin", TestResponse(body: body, drip: (chunkSize: 2000, interval: .milliseconds(5))))
        let downloader = Downloader(config: Self.patient())
        let url = server.url("/joiners.bin")
        let served = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await Task.sleep(for: .milliseconds(index % 50))
                    return try await downloader.load(ImageLoadRequest(url: url)).data == body
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(served == 200)
    }

    @Test func cancellingOneOfTwoCallersLeavesTheOtherServed() async throws {
        let gate = Gate()
        gatedRoutes(["/two.bin"], gate: gate, body: body)
        let downloader = Downloader(config: Self.patient())
        let url = server.url("/two.bin")
        let first = Task { try await downloader.load(ImageLoadRequest(url: url)) }
        let second = Task { try await downloader.load(ImageLoadRequest(url: url)) }
        try await waitUntil { downloader.callerCount(for: ImageLoadRequest(url: url)) == 2 }
        first.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await first.value }
        // The caller stops waiting at once; the download forgets it on its own queue just after.
        try await waitUntil { downloader.callerCount(for: ImageLoadRequest(url: url)) == 1 }
        #expect(downloader.callerCount(for: ImageLoadRequest(url: url)) == 1)
        gate.open()
        #expect(try await second.value.data == body)
        #expect(server.requestCount(for: "/two.bin") == 1)
    }

    @Test func cancellingEveryCallerClosesTheConnection() async throws {
        // 100 s of drip: the cancel lands mid-body however slowly a loaded machine runs this test.
        server.route("/drip.bin", TestResponse(body: body, drip: (chunkSize: 20, interval: .milliseconds(100))))
        let downloader = Downloader(config: Self.patient())
        let task = Task { try await downloader.load(ImageLoadRequest(url: server.url("/drip.bin"))) }
        // Mid-body: the server has sent part of it.
        try await waitUntil { server.bytesSent(for: "/drip.bin") > 0 }
        task.cancel()
        do {
            _ = try await task.value
            Issue.record("a cancelled load must throw")
        } catch let error as WebImageError {
            guard case .cancelled = error else { Issue.record("expected cancelled, got \(error)"); return }
        }
        try await waitUntil { server.closedByClientCount(for: "/drip.bin") == 1 }
        #expect(server.closedByClientCount(for: "/drip.bin") == 1)
        try await waitUntil { downloader.currentDownloadCount == 0 }
        #expect(downloader.currentDownloadCount == 0)
    }

    @Test func aRequestRightAfterACancelStartsCleanly() async throws {
        server.route("/again.bin", slow(.milliseconds(200)))
        let downloader = Downloader()
        let url = server.url("/again.bin")
        let cancelled = Task { try await downloader.load(ImageLoadRequest(url: url)) }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        _ = try? await cancelled.value
        #expect(try await downloader.load(ImageLoadRequest(url: url)).data == body)
    }

    @Test func aCallerWhoseTaskIsAlreadyCancelledIsRefusedAtOnce() async throws {
        server.route("/never.bin", slow())
        let downloader = Downloader()
        let url = server.url("/never.bin")
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await downloader.load(ImageLoadRequest(url: url))
        }
        await #expect(throws: WebImageError.cancelled(url: url)) { try await task.value }
    }

    func startOrder(of names: [(String, DownloadPriority)], config: DownloaderConfig) async throws -> [String] {
        let order = Mutex<[String]>([])
        let gate = Gate()
        server.route("/blocker") { _ in
            order.withLock { $0.append("blocker") }
            gate.wait()
            return TestResponse(body: Data([1]))
        }
        for (name, _) in names {
            server.route("/\(name)") { _ in
                order.withLock { $0.append(name) }
                return TestResponse(body: Data([2]))
            }
        }
        let downloader = Downloader(config: Self.patient(config))
        let blocker = Task { try await downloader.load(ImageLoadRequest(url: server.url("/blocker"))) }
        try await waitUntil { server.requestCount(for: "/blocker") == 1 }
        var tasks: [Task<ImageLoadResponse, any Error>] = []
        for (name, priority) in names {
            tasks.append(Task { try await downloader.load(ImageLoadRequest(url: server.url("/\(name)"), priority: priority)) })
            try await waitUntil { downloader.queuedDownloadCount == tasks.count }
        }
        #expect(downloader.queuedDownloadCount == names.count)
        gate.open()
        _ = try await blocker.value
        for task in tasks { _ = try await task.value }
        return order.withLock { $0 }
    }

    @Test func queuedDownloadsStartByPriorityThenInLIFOOrderWithALimitOfOne() async throws {
        let order = try await startOrder(of: [("low", .low), ("normal1", .normal), ("normal2", .normal), ("high", .high)],
                                         config: DownloaderConfig(maxConcurrentDownloads: 1, executionOrder: .lifo))
        #expect(order == ["blocker", "high", "normal2", "normal1", "low"])
    }

    @Test func aSharedDownloadTakesItsMostUrgentCallersPriority() async throws {
        let order = Mutex<[String]>([])
        let gate = Gate()
        server.route("/blocker") { _ in
            order.withLock { $0.append("blocker") }
            gate.wait()
            return TestResponse(body: Data([1]))
        }
        for name in ["first", "raised"] {
            server.route("/\(name)") { _ in
                order.withLock { $0.append(name) }
                return TestResponse(body: Data([2]))
            }
        }
        let downloader = Downloader(config: Self.patient(DownloaderConfig(maxConcurrentDownloads: 1)))
        let blocker = Task { try await downloader.load(ImageLoadRequest(url: server.url("/blocker"))) }
        try await waitUntil { server.requestCount(for: "/blocker") == 1 }
        let first = Task { try await downloader.load(ImageLoadRequest(url: server.url("/first"))) }
        try await waitUntil { downloader.queuedDownloadCount == 1 }
        let low = Task { try await downloader.load(ImageLoadRequest(url: server.url("/raised"), priority: .low)) }
        try await waitUntil { downloader.queuedDownloadCount == 2 }
        let high = Task { try await downloader.load(ImageLoadRequest(url: server.url("/raised"), priority: .high)) }
        try await waitUntil { downloader.callerCount(for: ImageLoadRequest(url: server.url("/raised"))) == 2 }
        gate.open()
        for task in [blocker, first, low, high] { _ = try await task.value }
        #expect(order.withLock { $0 } == ["blocker", "raised", "first"])
    }

    @Test func fifoIsTheDefaultOrder() async throws {
        let order = try await startOrder(of: [("a", .normal), ("b", .normal), ("c", .normal)],
                                         config: DownloaderConfig(maxConcurrentDownloads: 1))
        #expect(order == ["blocker", "a", "b", "c"])
    }

    /// Routes whose replies wait until `gate` opens.
    func gatedRoutes(_ paths: [String], gate: Gate, body: Data = Data([1])) {
        for path in paths {
            server.route(path) { _ in
                gate.wait()
                return TestResponse(body: body)
            }
        }
    }

    @Test func raisingTheLimitWhileRunningStartsQueuedDownloads() async throws {
        let gate = Gate()
        gatedRoutes((0..<4).map { "/limit\($0)" }, gate: gate)
        let downloader = Downloader(config: Self.patient(DownloaderConfig(maxConcurrentDownloads: 1)))
        let tasks = (0..<4).map { index in
            Task { try await downloader.load(ImageLoadRequest(url: server.url("/limit\(index)"))) }
        }
        try await waitUntil { downloader.queuedDownloadCount == 3 }
        #expect(downloader.currentDownloadCount == 1)
        downloader.updateConfig { $0.maxConcurrentDownloads = 4 }
        #expect(downloader.currentDownloadCount == 4)
        try await waitUntil { server.totalRequestCount == 4 }
        #expect(server.totalRequestCount == 4)
        gate.open()
        for task in tasks { _ = try await task.value }
    }

    @Test func theTotalTimeoutStopsASlowDrip() async throws {
        server.route("/slow-drip", TestResponse(body: body, drip: (chunkSize: 50, interval: .milliseconds(50))))
        let downloader = Downloader(config: DownloaderConfig(downloadTimeout: .milliseconds(400)))
        let url = server.url("/slow-drip")
        await #expect(throws: WebImageError.timedOut(url: url)) { try await downloader.load(ImageLoadRequest(url: url)) }
    }

    /// A drip that takes 20 s: any of these downloads that finishes did not time out.
    /// 20 s of drip (longer under ThreadSanitizer, whose slowness must not let it end before the test does).
    /// 50 bytes every 50 ms of a 2 MB body: 2,000 s, longer than any test waits (the 20 KB body ended
    /// under a loaded machine's delays before a test cancelled it).
    var endlessDrip: TestResponse {
        TestResponse(body: Data(repeating: 7, count: 2_000_000), drip: (chunkSize: 50, interval: .milliseconds(50) * testTimeScale))
    }

    @Test func downloadsStartedAtDifferentTimesEachTimeOut() async throws {
        server.route("/drip-a", endlessDrip)
        server.route("/drip-b", endlessDrip)
        let downloader = Downloader(config: DownloaderConfig(downloadTimeout: .milliseconds(500)))
        let first = server.url("/drip-a")
        let second = server.url("/drip-b")
        let a = Task { try await downloader.load(ImageLoadRequest(url: first)) }
        try await waitUntil { server.requestCount(for: "/drip-a") == 1 }
        try await Task.sleep(for: .milliseconds(200))
        // One timer serves every deadline: after it fails the first download it must wake again
        // for the second.
        let b = Task { try await downloader.load(ImageLoadRequest(url: second)) }
        await #expect(throws: WebImageError.timedOut(url: first)) { try await a.value }
        await #expect(throws: WebImageError.timedOut(url: second)) { try await b.value }
        try await waitUntil { downloader.watchedDeadlineCount == 0 }
        #expect(downloader.watchedDeadlineCount == 0)
    }

    @Test func finishedDownloadsLeaveNoDeadlineBehind() async throws {
        server.route("/quick.bin", TestResponse(body: body))
        // A timeout far beyond the wait below: only finishing may take a deadline off the watch.
        let downloader = Downloader(config: DownloaderConfig(downloadTimeout: .seconds(600)))
        for index in 0..<20 {
            _ = try await downloader.load(ImageLoadRequest(url: server.url("/quick.bin?\(index)")))
        }
        // The watch is dropped just after the callers are resumed.
        try await waitUntil(timeout: .seconds(10)) { downloader.watchedDeadlineCount == 0 }
        #expect(downloader.watchedDeadlineCount == 0)
    }

    @Test func aShorterTimeoutSetWhileADownloadRunsStillFires() async throws {
        server.route("/drip-long", endlessDrip)
        server.route("/drip-short", endlessDrip)
        let downloader = Downloader(config: DownloaderConfig(downloadTimeout: .seconds(120)))
        let long = Task { try await downloader.load(ImageLoadRequest(url: server.url("/drip-long"))) }
        try await waitUntil { server.requestCount(for: "/drip-long") == 1 }
        // The timer is set for the long download's deadline; the new, earlier one must move it.
        downloader.updateConfig { $0.downloadTimeout = .milliseconds(300) }
        let url = server.url("/drip-short")
        await #expect(throws: WebImageError.timedOut(url: url)) { try await downloader.load(ImageLoadRequest(url: url)) }
        long.cancel()
        await #expect(throws: WebImageError.self) { try await long.value }
    }

    @Test func timeSpentQueuedDoesNotCountAgainstTheTimeout() async throws {
        // The second download waits behind an endless one for longer than the timeout in force
        // when it starts, and must still succeed. The waits are for states that last and the
        // sleep only makes the queued time longer, so a busy machine cannot break this.
        server.route("/blocker", endlessDrip)
        server.route("/queued", TestResponse(body: body))
        // The blocker must outlast the test however long a loaded machine starves it: patient time-outs (a loaded
        // ThreadSanitizer run saw it stall out at the default 15 s, which started the queued download early).
        let downloader = Downloader(config: Self.patient(DownloaderConfig(maxConcurrentDownloads: 1)))
        let blocker = Task { try await downloader.load(ImageLoadRequest(url: server.url("/blocker"))) }
        try await waitUntil { downloader.startedDownloadCount == 1 }
        let queued = Task { try await downloader.load(ImageLoadRequest(url: server.url("/queued"))) }
        try await waitUntil { downloader.queuedDownloadCount == 1 }
        // 5 s: the queued download itself must finish within the timeout once it starts, on a machine
        // whose cores other work may hold for seconds (1 s failed there); queued for 7.5 s, longer than it.
        let timeout = Duration.seconds(5) * testTimeScale
        try await Task.sleep(for: timeout * 1.5)
        downloader.updateConfig { $0.downloadTimeout = timeout }
        blocker.cancel()
        await #expect(throws: WebImageError.self) { try await blocker.value }
        let response = try await queued.value
        #expect(response.data == body)
        #expect(response.metrics.queuedDuration > timeout)
    }

    func expectFailure(_ response: TestResponse, config: DownloaderConfig = DownloaderConfig(),
                       matches: (WebImageError) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        let path = "/failure-\(UUID().uuidString.prefix(8))"
        server.route(path, response)
        do {
            let result = try await Downloader(config: config).load(ImageLoadRequest(url: server.url(path)))
            Issue.record("expected a failure, got \(result.data.count) bytes", sourceLocation: sourceLocation)
        } catch let error as WebImageError {
            #expect(matches(error), "unexpected \(error)", sourceLocation: sourceLocation)
            #expect(error.url == server.url(path), sourceLocation: sourceLocation)
        } catch {
            Issue.record("not a WebImageError: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func everyFailureIsATypedErrorWithTheURL() async throws {
        await expectFailure(.text("gone", status: 404)) { if case .badStatusCode(404, _, nil) = $0 { true } else { false } }
        await expectFailure(.text("oops", status: 503)) { if case .badStatusCode(503, _, nil) = $0 { $0.isTransient } else { false } }
        await expectFailure(TestResponse(headers: [("Content-Type", "text/html")], body: Data("<html>".utf8)),
                            config: DownloaderConfig(acceptableContentTypes: ["image/*"])) {
            if case .unacceptableContentType("text/html", _) = $0 { true } else { false }
        }
        await expectFailure(TestResponse(body: body), config: DownloaderConfig(maxResponseBytes: 1000)) {
            if case .responseTooLarge(1000, _) = $0 { true } else { false }
        }
        await expectFailure(TestResponse(body: body, contentLength: .omitted), config: DownloaderConfig(maxResponseBytes: 1000)) {
            if case .responseTooLarge(1000, _) = $0 { true } else { false }
        }
        await expectFailure(TestResponse(body: body, closeAfterBodyBytes: 5000)) {
            if case .truncatedResponse(let received, 20_000, _) = $0 { received < 20_000 } else { false }
        }
        await expectFailure(TestResponse(body: Data())) { if case .emptyResponse = $0 { true } else { false } }
        await expectFailure(TestResponse(body: body), config: DownloaderConfig(responseModifier: { _ in nil })) {
            if case .rejected = $0 { true } else { false }
        }
        await expectFailure(TestResponse(body: body), config: DownloaderConfig(requestModifier: { _ in nil })) {
            if case .rejected = $0 { true } else { false }
        }
        await expectFailure(TestResponse(body: body), config: DownloaderConfig(dataTransformer: { _, _ in nil })) {
            if case .rejected = $0 { true } else { false }
        }
    }

    @Test func aRedirectLoopFailsWithTooManyRedirects() async throws {
        server.route("/loop-a", .redirect(to: "/loop-b"))
        server.route("/loop-b", .redirect(to: "/loop-a"))
        let url = server.url("/loop-a")
        await #expect(throws: WebImageError.tooManyRedirects(url: url)) {
            try await Downloader(config: DownloaderConfig(maxRedirects: 3)).load(ImageLoadRequest(url: url))
        }
    }

    @Test func redirectsAreFollowedUpToTheLimit() async throws {
        server.route("/moved", .redirect(to: "/target"))
        server.route("/target", TestResponse(body: body))
        let response = try await Downloader().load(ImageLoadRequest(url: server.url("/moved")))
        #expect(response.data == body)
        #expect(response.url == server.url("/target"))
        #expect(response.metrics.redirectCount == 1)
    }

    @Test func aConnectionRefusedIsATransportError() async throws {
        // A port bound and never listening: a stopped server's port could be taken by another
        // test's server meanwhile (a full run once got that server's answer instead of a refusal).
        let closed = try ClosedLoopbackPort()
        let url = URL(string: "http://127.0.0.1:\(closed.port)/nothing")!
        defer { withExtendedLifetime(closed) {} }
        do {
            _ = try await Downloader().load(ImageLoadRequest(url: url))
            Issue.record("expected a transport error")
        } catch let error as WebImageError {
            guard case .transport = error else { Issue.record("expected transport, got \(error)"); return }
            #expect(error.isTransient)
        }
    }

    @Test func nonHTTPURLsAreInvalid() async {
        await #expect(throws: WebImageError.self) { try await Downloader().load(ImageLoadRequest(url: URL(fileURLWithPath: "/tmp/x.png"))) }
        #expect(!Downloader.shared.canLoad(URL(string: "ftp://example.com/a.png")!))
    }

    @Test func headersModifiersAndAuthenticationReachTheServer() async throws {
        server.route("/headers", TestResponse(body: body))
        let downloader = Downloader(config: DownloaderConfig(
            basicAuthentication: (username: "ada", password: "secret"),
            requestModifier: { request in
                var request = request
                request.setValue("modified", forHTTPHeaderField: "X-Modifier")
                return request
            }))
        downloader.setValue("token-1", forHTTPHeaderField: "X-Token")
        downloader.setValue(nil, forHTTPHeaderField: "User-Agent")
        downloader.setValue("Custom/1.0", forHTTPHeaderField: "User-Agent")
        _ = try await downloader.load(ImageLoadRequest(url: server.url("/headers"), headers: ["X-Request": "yes"]))
        let headers = try #require(server.requests(for: "/headers").first).headers
        #expect(headers["accept"] == "image/*,*/*;q=0.8")
        #expect(headers["user-agent"] == "Custom/1.0")
        #expect(headers["x-token"] == "token-1")
        #expect(headers["x-modifier"] == "modified")
        #expect(headers["x-request"] == "yes")
        #expect(headers["authorization"] == "Basic " + Data("ada:secret".utf8).base64EncodedString())
        downloader.setValue(nil, forHTTPHeaderField: "X-Token")
        _ = try await downloader.load(ImageLoadRequest(url: server.url("/headers"), headers: ["X-Second": "1"]))
        #expect(server.requests(for: "/headers").last?.headers["x-token"] == nil)
    }

    @Test func aCredentialIsSentAsBasicAuthenticationAndWinsOverTheUserNamePair() async throws {
        server.route("/credential", TestResponse(body: body))
        let downloader = Downloader(config: DownloaderConfig(
            basicAuthentication: (username: "ignored", password: "ignored"),
            credential: URLCredential(user: "grace", password: "hopper", persistence: .none)))
        _ = try await downloader.load(ImageLoadRequest(url: server.url("/credential")))
        let headers = try #require(server.requests(for: "/credential").first).headers
        #expect(headers["authorization"] == "Basic " + Data("grace:hopper".utf8).base64EncodedString())
    }

    @Test func theDefaultUserAgentNamesWebImage() async throws {
        server.route("/agent", TestResponse(body: body))
        _ = try await Downloader().load(ImageLoadRequest(url: server.url("/agent")))
        #expect(server.requests(for: "/agent").first?.headers["user-agent"]?.hasPrefix("WebImage/") == true)
    }

    @Test func conditionalRequestsReportNotModified() async throws {
        server.route("/etag") { request in
            request.headers["if-none-match"] == "\"v1\""
                ? TestResponse(status: 304)
                : TestResponse(headers: [("ETag", "\"v1\""), ("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT"),
                                         ("Cache-Control", "public, max-age=600")], body: body)
        }
        let downloader = Downloader()
        let url = server.url("/etag")
        let first = try await downloader.load(ImageLoadRequest(url: url))
        #expect(first.validators == HTTPValidators(entityTag: "\"v1\"", lastModified: "Wed, 21 Oct 2015 07:28:00 GMT"))
        #expect(first.maxAge == 600)
        await #expect(throws: WebImageError.notModified(url: url)) {
            try await downloader.load(ImageLoadRequest(url: url, validators: first.validators))
        }
        #expect(server.requests(for: "/etag").last?.headers["if-modified-since"] == "Wed, 21 Oct 2015 07:28:00 GMT")
        let changed = try await downloader.load(ImageLoadRequest(url: url, validators: HTTPValidators(entityTag: "\"old\"")))
        #expect(changed.data == body)
    }

    @Test func progressIsMonotoneAndEndsAtTheByteCount() async throws {
        server.route("/progress", TestResponse(body: body, drip: (chunkSize: 3000, interval: .milliseconds(10))))
        let reports = Mutex<[ImageLoadProgress]>([])
        // Patient: the drip takes a moment, and a loaded CI machine may stall this test for longer than the 15 s default.
        let response = try await Downloader(config: Self.patient()).load(ImageLoadRequest(url: server.url("/progress"))) { progress in
            reports.withLock { $0.append(progress) }
        }
        let all = reports.withLock { $0 }
        #expect(all.count >= 2)
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.receivedBytes < $1.receivedBytes })
        #expect(all.last?.receivedBytes == body.count)
        #expect(all.allSatisfy { $0.expectedBytes == body.count })
        #expect(all.reduce(Data()) { $0 + $1.chunk } == response.data)
    }

    @Test func eventsEndWithTheResponse() async throws {
        server.route("/events", TestResponse(body: body, drip: (chunkSize: 5000, interval: .milliseconds(5))))
        var received = 0
        var finished: ImageLoadResponse?
        for try await event in Downloader().events(for: ImageLoadRequest(url: server.url("/events"))) {
            switch event {
            case .progress(let progress): received = progress.receivedBytes
            case .finished(let response): finished = response
            }
        }
        #expect(received == body.count)
        #expect(finished?.data == body)
    }

    @Test func aSlowConsumerGetsMergedChunksNotAGrowingQueue() async throws {
        server.route("/merged", TestResponse(body: body, drip: (chunkSize: 1000, interval: .milliseconds(1))))
        let downloader = Downloader()
        let stream = downloader.events(for: ImageLoadRequest(url: server.url("/merged")))
        try await waitUntil { downloader.startedDownloadCount == 1 && downloader.currentDownloadCount == 0 }
        var events: [DownloadEvent] = []
        for try await event in stream { events.append(event) }
        // Twenty chunks arrived before the consumer looked: it gets them merged, not twenty events. (The
        // first chunk can be handed over on its own before the consumer starts, so "one merged event"
        // was a race that CI lost now and then; the bound below is what proves the merging.)
        let progress = events.compactMap { event -> ImageLoadProgress? in
            if case .progress(let progress) = event { return progress } else { return nil }
        }
        #expect(progress.count <= 2, "\(progress.count) progress events for 20 chunks that arrived before the consumer")
        #expect(progress.reduce(Data()) { $0 + $1.chunk } == body)
        #expect(progress.last?.receivedBytes == body.count)
        guard case .finished(let response)? = events.last else {
            Issue.record("expected the response last: \(events)")
            return
        }
        #expect(response.data == body)
    }

    @Test func leavingTheEventLoopEarlyCancelsTheDownload() async throws {
        // 100 s of drip: the loop is left mid-body however slowly a loaded machine runs this test.
        server.route("/leave", TestResponse(body: body, drip: (chunkSize: 20, interval: .milliseconds(100))))
        let downloader = Downloader(config: Self.patient())
        for try await event in downloader.events(for: ImageLoadRequest(url: server.url("/leave"))) {
            guard case .progress = event else { Issue.record("the download should not finish"); break }
            break
        }
        try await waitUntil { server.closedByClientCount(for: "/leave") == 1 }
        #expect(server.closedByClientCount(for: "/leave") == 1)
        // The connection closes first; the download's bookkeeping ends on its own queue just after.
        try await waitUntil { downloader.currentDownloadCount == 0 }
        #expect(downloader.currentDownloadCount == 0)
    }

    @Test func cancelAllFailsEveryCallerAndClosesTheConnections() async throws {
        // 100 s of drip each: cancelAll lands mid-body however slowly a loaded machine runs this test.
        for index in 0..<3 { server.route("/all\(index)", TestResponse(body: body, drip: (chunkSize: 20, interval: .milliseconds(100)))) }
        let downloader = Downloader(config: Self.patient(DownloaderConfig(maxConcurrentDownloads: 2)))
        // The third is started only once the first two hold both slots, so it is the one that queues.
        var tasks = (0..<2).map { index in Task { try await downloader.load(ImageLoadRequest(url: server.url("/all\(index)"))) } }
        try await waitUntil { server.totalRequestCount == 2 }
        tasks.append(Task { try await downloader.load(ImageLoadRequest(url: server.url("/all2"))) })
        try await waitUntil { downloader.queuedDownloadCount == 1 }
        downloader.cancelAll()
        for task in tasks {
            await #expect(throws: WebImageError.self) { try await task.value }
        }
        try await waitUntil { server.closedByClientCount(for: "/all0") + server.closedByClientCount(for: "/all1") == 2 }
        #expect(server.closedByClientCount(for: "/all0") + server.closedByClientCount(for: "/all1") == 2)
        #expect(server.requestCount(for: "/all2") == 0)
    }

    @Test func thePerHostLimitHoldsBackExtraDownloads() async throws {
        let gate = Gate()
        gatedRoutes((0..<3).map { "/host\($0)" }, gate: gate)
        let downloader = Downloader(config: Self.patient(DownloaderConfig(maxConcurrentDownloads: 6, maxConcurrentDownloadsPerHost: 2)))
        let tasks = (0..<3).map { index in Task { try await downloader.load(ImageLoadRequest(url: server.url("/host\(index)"))) } }
        try await waitUntil { downloader.queuedDownloadCount + downloader.currentDownloadCount == 3 }
        #expect(downloader.currentDownloadCount == 2)
        #expect(downloader.queuedDownloadCount == 1)
        gate.open()
        for task in tasks { _ = try await task.value }
    }

    @Test func aCookieDownloadAndAPlainOneRunningAtOnceEachGetTheirOwnBody() async throws {
        // The two URLSessions (with and without cookies) both number their first task 1.
        let gate = Gate()
        let cookieBody = Data(repeating: 0xC0, count: 3000), plainBody = Data(repeating: 0x9A, count: 5000)
        server.route("/cookie.bin") { _ in gate.wait(); return TestResponse(body: cookieBody) }
        server.route("/plain.bin") { _ in gate.wait(); return TestResponse(body: plainBody) }
        // Not patient without end: a download whose callbacks went to the other one ends in its
        // time-out, not a hang; two minutes leave a loaded machine room to serve both.
        let downloader = Downloader(config: DownloaderConfig(downloadTimeout: .seconds(120) * testTimeScale, idleTimeout: .seconds(120) * testTimeScale))
        let cookie = Task { try await downloader.load(ImageLoadRequest(url: server.url("/cookie.bin"), handlesCookies: true)).data }
        let plain = Task { try await downloader.load(ImageLoadRequest(url: server.url("/plain.bin"))).data }
        try await waitUntil { server.totalRequestCount == 2 }
        gate.open()
        #expect(try await cookie.value == cookieBody)
        #expect(try await plain.value == plainBody)
    }
}
