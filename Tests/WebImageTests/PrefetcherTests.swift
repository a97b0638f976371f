import Foundation
import Synchronization
import Testing
@testable import WebImage

@Suite struct PrefetcherTests {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
        server.route("/p/*", TestResponse(headers: [("Content-Type", "image/png")], body: picture))
        server.route("/missing/*", .text("no", status: 404))
    }

    func urls(_ count: Int, under folder: String = "p") -> [URL] {
        (0..<count).map { server.url("/\(folder)/\($0).png") }
    }

    @Test func prefetchesEveryURLIntoTheCacheWithMonotoneProgress() async throws {
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager)
        let batch = urls(8)
        let token = await prefetcher.prefetch(urls: batch, options: .waitStoreCache)
        var seen: [PrefetchProgress] = []
        for await progress in token.progressUpdates() { seen.append(progress) }
        #expect(seen.last == PrefetchProgress(finishedCount: 8, skippedCount: 0, totalCount: 8))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.finishedCount + $0.skippedCount < $1.finishedCount + $1.skippedCount })
        for url in batch {
            #expect(await fixture.cache.containsImage(forKey: url.absoluteString) != .none)
        }
        #expect(server.requests(for: "/p/0.png").count == 1)
    }

    @Test func anEmptyListCompletesAtOnce() async throws {
        let prefetcher = Prefetcher(manager: ManagerFixture().manager)
        let token = await prefetcher.prefetch(urls: [])
        #expect(await token.completion() == PrefetchProgress(totalCount: 0))
        var updates: [PrefetchProgress] = []
        for await progress in token.progressUpdates() { updates.append(progress) }
        #expect(updates == [PrefetchProgress(totalCount: 0)])
    }

    @Test func failuresAreSkippedAndTheBatchStillCompletes() async throws {
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager)
        let token = await prefetcher.prefetch(urls: urls(3) + urls(2, under: "missing"))
        #expect(await token.completion() == PrefetchProgress(finishedCount: 3, skippedCount: 2, totalCount: 5))
    }

    @Test func neverMoreThanTheLimitLoadAtOnce() async throws {
        let gate = Gate()
        server.route("/held/*") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager, maxConcurrentPrefetchCount: 2)
        let token = await prefetcher.prefetch(urls: urls(5, under: "held"))
        try await waitUntil { server.totalRequestCount == 2 }
        #expect(await prefetcher.runningCount == 2)
        #expect(await prefetcher.queuedCount == 3)
        #expect(server.totalRequestCount == 2)
        gate.open()
        #expect(await token.completion().finishedCount == 5)
        #expect(server.peakConnectionCount <= 2)
    }

    @Test func severalBatchesRunAtOnceAndEachCompletes() async throws {
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager)
        let first = await prefetcher.prefetch(urls: Array(urls(6)[0..<3]))
        let second = await prefetcher.prefetch(urls: Array(urls(6)[3..<6]))
        #expect(await first.completion().finishedCount == 3)
        #expect(await second.completion().finishedCount == 3)
    }

    @Test func cancellingABatchSkipsWhatIsLeftWithoutHanging() async throws {
        let gate = Gate()
        server.route("/slow/*") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager, maxConcurrentPrefetchCount: 1)
        let token = await prefetcher.prefetch(urls: urls(4, under: "slow"))
        try await waitUntil { server.totalRequestCount == 1 }
        token.cancel()
        #expect(token.isCancelled)
        let final = await token.completion()
        #expect(final.skippedCount == 4)
        #expect(server.totalRequestCount == 1)
        gate.open()
    }

    @Test func cancellingEveryDownloadMidPrefetchCompletesWithTheRestSkipped() async throws {
        let gate = Gate()
        server.route("/stuck/*") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager, maxConcurrentPrefetchCount: 2)
        let token = await prefetcher.prefetch(urls: urls(2) + urls(4, under: "stuck"))
        // Both quick loads counted as finished (a slot frees a moment before its load is counted: seen
        // on a loaded machine) and both stuck downloads on the wire.
        try await waitUntil {
            token.progress.finishedCount == 2
                && server.requestCount(for: "/stuck/0.png") + server.requestCount(for: "/stuck/1.png") == 2
        }
        await prefetcher.cancelAll()
        let final = await token.completion()
        #expect(final.finishedCount == 2)
        #expect(final.skippedCount == 4)
        gate.open()
    }

    @Test func dataOnlyPrefetchStoresBytesOnDiskWithoutDecoding() async throws {
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let prefetcher = Prefetcher(manager: fixture.manager)
        server.route("/raw.bin", TestResponse(body: Data("not decodable, but wanted on disk".utf8)))
        let url = server.url("/raw.bin")
        let token = await prefetcher.prefetch(urls: [url], storesDataOnly: true)
        #expect(await token.completion().finishedCount == 1)
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == Data("not decodable, but wanted on disk".utf8))
        #expect(fixture.cache.imageFromMemory(forKey: url.absoluteString) == nil)
        let again = await prefetcher.prefetch(urls: [url], storesDataOnly: true)
        #expect(await again.completion().finishedCount == 1)
        #expect(server.requestCount(for: "/raw.bin") == 1)
    }
}
