import Foundation
import Testing
@testable import WebImage

/// The event stream: partial images, progress, exactly one final result, ending early.
@Suite struct ManagerEventTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    @Test func progressiveLoadsDeliverPartialImagesThenOneFinalResult() async throws {
        let large = try encodedPicture(width: 300, height: 300, seed: 3, as: .jpeg)
        server.route("/progressive.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: large,
                                                      drip: (chunkSize: 2000, interval: .milliseconds(20))))
        let fixture = ManagerFixture(config: WebImageManagerConfig(partialImageInterval: .zero))
        defer { fixture.directory.remove() }
        var partials = 0
        var progress: [Int] = []
        var finals: [ImageResult] = []
        for try await event in fixture.manager.imageEvents(url: server.url("/progressive.jpg"), options: .progressiveLoad) {
            switch event {
            case .partialImage(let image): partials += 1; #expect(image.size == PixelSize(width: 300, height: 300))
            case .progress(let received, _): progress.append(received)
            case .finished(let result): finals.append(result)
            case .cachedImage: Issue.record("nothing was cached")
            }
        }
        #expect(partials >= 1)
        #expect(progress == progress.sorted() && progress.last == large.count)
        #expect(finals.count == 1)
        #expect(finals.first?.image.rgbaSHA256() == (try CoderRegistry.shared.decode(large)).rgbaSHA256())
    }

    @Test func everyOptionCombinationEndsInExactlyOneFinalResultOrOneError() async throws {
        serve("/combo.png")
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let flags: [WebImageOptions] = [.refreshCached, .fromCacheOnly, .fromLoaderOnly, .progressiveLoad, .waitStoreCache,
                                        .cacheMemoryOnly, .queryMemoryData, .scaleDownLargeImages]
        for mask in 0..<(1 << flags.count) {
            var options: WebImageOptions = [.retryFailed]
            for (bit, flag) in flags.enumerated() where mask & (1 << bit) != 0 { options.insert(flag) }
            var finals = 0
            var failed = false
            do {
                for try await event in fixture.manager.imageEvents(url: server.url("/combo.png"), options: options) {
                    if case .finished = event { finals += 1 }
                }
            } catch {
                failed = true
            }
            #expect(finals + (failed ? 1 : 0) == 1, "options \(options.rawValue)")
        }
    }

    @Test func endingTheEventStreamEarlyCancelsTheLoad() async throws {
        // 100 s of drip: the stream is left mid-body however slowly a loaded machine runs this test.
        server.route("/endearly.png", TestResponse(headers: [("Content-Type", "image/png")], body: Data(count: 20_000),
                                                   drip: (chunkSize: 20, interval: .milliseconds(100))))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        for try await event in fixture.manager.imageEvents(url: server.url("/endearly.png")) {
            if case .progress = event { break }
        }
        try await waitUntil { server.closedByClientCount(for: "/endearly.png") == 1 }
        #expect(server.closedByClientCount(for: "/endearly.png") == 1)
        try await waitUntil { !fixture.manager.isRunning }
        #expect(!fixture.manager.isRunning)
    }
}
