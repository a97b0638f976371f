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

    @Test func callersOfTheSameRequestShareAnOperationAndOthersDoNot() {
        let scheduler = DownloadScheduler(config: DownloaderConfig(maxConcurrentDownloads: 1))
        defer { scheduler.shutdown() }
        let first = scheduler.join(ImageLoadRequest(url: url))
        let second = scheduler.join(ImageLoadRequest(url: url, priority: .high))
        #expect(first.operation === second.operation && first.waiterID != second.waiterID)
        #expect(scheduler.callerCount(for: ImageLoadRequest(url: url)) == 2)
        #expect(first.operation.priority == .high, "a shared download takes its most urgent caller's priority")
        let withHeaders = scheduler.join(ImageLoadRequest(url: url, headers: ["Accept": "image/png"]))
        let withCookies = scheduler.join(ImageLoadRequest(url: url, handlesCookies: true))
        #expect(withHeaders.operation !== first.operation && withCookies.operation !== first.operation)
        let modified = scheduler.join(ImageLoadRequest(url: url, requestModifier: { $0 }))
        let modifiedAgain = scheduler.join(ImageLoadRequest(url: url, requestModifier: { $0 }))
        #expect(modified.operation !== modifiedAgain.operation, "a request with a modifier never shares")
    }

    @Test func aStoppedOperationIsNotJoinedAndItsSlotIsFreed() {
        let scheduler = DownloadScheduler(config: DownloaderConfig(maxConcurrentDownloads: 1))
        defer { scheduler.shutdown() }
        let first = scheduler.join(ImageLoadRequest(url: url))
        first.operation.removeWaiter(first.waiterID)   // its only caller leaves before waiting
        #expect(first.operation.isFinished)
        let next = scheduler.join(ImageLoadRequest(url: url))
        #expect(next.operation !== first.operation, "a new caller gets a new download")
        #expect(scheduler.callerCount(for: ImageLoadRequest(url: url)) == 1)
    }

    @Test func shutdownCancelsEveryOperationAndRefusesNothingTwice() {
        let scheduler = DownloadScheduler(config: DownloaderConfig(maxConcurrentDownloads: 1))
        let queued = scheduler.join(ImageLoadRequest(url: url.appendingPathComponent("a")))
        let other = scheduler.join(ImageLoadRequest(url: url.appendingPathComponent("b")))
        scheduler.shutdown()
        #expect(scheduler.isShutDown)
        #expect(queued.operation.isFinished && other.operation.isFinished)
        #expect(scheduler.runningCount == 0 && scheduler.queuedCount == 0)
        scheduler.shutdown()
    }
}
