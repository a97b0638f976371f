import Foundation
import Testing
@testable import WebImage

/// Which callers share an operation, a stopped operation never joined again, and shutdown. The
/// server holds every request for 30 s, so operations stay under way while the test looks at them.
@Suite struct DownloadSchedulerTests {
    let server: TestHTTPServer
    let url: URL

    init() throws {
        server = try TestHTTPServer()
        url = server.url("/held.png")
        for path in ["/held.png", "/held.png/a", "/held.png/b"] {
            server.route(path, TestResponse(body: Data([1]), delayBeforeHeaders: .seconds(30)))
        }
    }

    @Test func callersOfTheSameRequestShareAnOperationAndOthersDoNot() async throws {
        let scheduler = DownloadScheduler(config: DownloaderConfig(maxConcurrentDownloads: 1))
        let first = try #require(scheduler.join(ImageLoadRequest(url: url)))
        let second = try #require(scheduler.join(ImageLoadRequest(url: url, priority: .high)))
        #expect(first.operation === second.operation && first.waiterID != second.waiterID)
        #expect(scheduler.callerCount(for: ImageLoadRequest(url: url)) == 2)
        #expect(first.operation.priority == .high, "a shared download takes its most urgent caller's priority")
        let withHeaders = try #require(scheduler.join(ImageLoadRequest(url: url, headers: ["Accept": "image/png"])))
        let withCookies = try #require(scheduler.join(ImageLoadRequest(url: url, handlesCookies: true)))
        #expect(withHeaders.operation !== first.operation && withCookies.operation !== first.operation)
        let modified = try #require(scheduler.join(ImageLoadRequest(url: url, requestModifier: { $0 })))
        let modifiedAgain = try #require(scheduler.join(ImageLoadRequest(url: url, requestModifier: { $0 })))
        #expect(modified.operation !== modifiedAgain.operation, "a request with a modifier never shares")
        await scheduler.shutdown()
    }

    @Test func aStoppedOperationIsNotJoinedAndItsSlotIsFreed() async throws {
        let scheduler = DownloadScheduler(config: DownloaderConfig(maxConcurrentDownloads: 1))
        let first = try #require(scheduler.join(ImageLoadRequest(url: url)))
        first.operation.removeWaiter(first.waiterID)   // its only caller leaves before waiting
        #expect(first.operation.isFinished)
        let next = try #require(scheduler.join(ImageLoadRequest(url: url)))
        #expect(next.operation !== first.operation, "a new caller gets a new download")
        #expect(scheduler.callerCount(for: ImageLoadRequest(url: url)) == 1)
        await scheduler.shutdown()
    }

    @Test func shutdownCancelsEveryOperationAndRefusesLaterCallers() async throws {
        let scheduler = DownloadScheduler(config: DownloaderConfig(maxConcurrentDownloads: 1))
        let queued = try #require(scheduler.join(ImageLoadRequest(url: url.appendingPathComponent("a"))))
        let other = try #require(scheduler.join(ImageLoadRequest(url: url.appendingPathComponent("b"))))
        await scheduler.shutdown()
        #expect(scheduler.isShutDown)
        #expect(queued.operation.isFinished && other.operation.isFinished)
        #expect(scheduler.runningCount == 0 && scheduler.queuedCount == 0)
        #expect(scheduler.join(ImageLoadRequest(url: url)) == nil, "no operation starts after shutdown")
        await scheduler.shutdown()   // a second call does nothing
    }

    /// Loads racing a shutdown (five rounds of eight): each is refused or cancelled with a typed error, and none makes a
    /// task on an invalidated session (FoundationNetworking would trap: "Session invalidated").
    @Test func loadsRacingAShutdownEndInTypedErrors() async throws {
        for round in 0..<5 {
            let downloader = Downloader()
            let loads = (0..<8).map { index in
                server.route("/race/\(round)-\(index)", TestResponse(body: Data([1]), delayBeforeHeaders: .seconds(30)))
                return Task { try await downloader.load(ImageLoadRequest(url: server.url("/race/\(round)-\(index)"))) }
            }
            await downloader.shutdown()
            for load in loads {
                do {
                    _ = try await load.value
                    Issue.record("a load finished although the server holds every request")
                } catch let error as WebImageError {
                    switch error {
                    case .shutDown, .cancelled: break
                    default: Issue.record("unexpected \(error)")
                    }
                }
            }
        }
    }
}
