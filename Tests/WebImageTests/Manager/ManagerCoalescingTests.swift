import Foundation
import Testing
@testable import WebImage

/// Coalescing of concurrent loads and cancellation (SDWebImage manager tests 06, 09, 10, 12).
@Suite struct ManagerCoalescingTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()
    }

    @Test func concurrentLoadsOfOneKeyShareOneDownloadAndOneDecode() async throws {
        let gate = Gate()
        server.route("/shared.png") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/shared.png")
        let images = try await withThrowingTaskGroup(of: Image.self) { group in
            for _ in 0..<20 { group.addTask { try await fixture.manager.loadImage(url: url).image } }
            try await waitUntil { fixture.manager.callerCount(url: url) == 20 }
            gate.open()
            return try await group.reduce(into: [Image]()) { $0.append($1) }
        }
        #expect(images.count == 20)
        #expect(images.allSatisfy { $0 === images[0] })
        #expect(server.requestCount(for: "/shared.png") == 1)
        #expect(fixture.manager.statistics.joins == 19)
    }

    @Test func aThousandLoadsOfAHundredURLsMakeExactlyAHundredRequests() async throws {
        server.route("/many/*", TestResponse(headers: [("Content-Type", "image/png")], body: picture))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<1000 {
                group.addTask { _ = try await fixture.manager.loadImage(url: server.url("/many/\(index % 100).png")) }
            }
            try await group.waitForAll()
        }
        #expect(server.totalRequestCount == 100)
        #expect(!fixture.manager.isRunning)
    }

    @Test func cancellingOneOfSeveralCallersLeavesTheOthersTheirResult() async throws {
        let gate = Gate()
        server.route("/several.png") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/several.png")
        let cancelled = Task { try await fixture.manager.loadImage(url: url) }
        let others = (0..<2).map { _ in Task { try await fixture.manager.loadImage(url: url) } }
        try await waitUntil { fixture.manager.callerCount(url: url) == 3 }
        cancelled.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await cancelled.value }
        #expect(fixture.manager.callerCount(url: url) == 2)
        gate.open()
        for task in others { #expect(try await task.value.image.width == 64) }
        #expect(server.requestCount(for: "/several.png") == 1)
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func cancellingTheOnlyCallerCancelsTheDownloadAndANewLoadStartsCleanly() async throws {
        // 100 s of drip: the cancel lands mid-body, and the server sees the hang-up before the body
        // could end, however slowly a loaded machine runs this test (6 s of drip once was not enough).
        server.route("/drip.png", TestResponse(headers: [("Content-Type", "image/png")], body: Data(count: 20_000),
                                               drip: (chunkSize: 20, interval: .milliseconds(100))))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/drip.png")
        let task = Task { try await fixture.manager.loadImage(url: url) }
        try await waitUntil { server.bytesSent(for: "/drip.png") > 0 }
        task.cancel()
        await #expect(throws: WebImageError.cancelled(url: url)) { try await task.value }
        try await waitUntil { server.closedByClientCount(for: "/drip.png") == 1 }
        #expect(server.closedByClientCount(for: "/drip.png") == 1)
        server.route("/drip.png", TestResponse(headers: [("Content-Type", "image/png")], body: picture))
        #expect(try await fixture.manager.loadImage(url: url).image.width == 64)
        #expect(!fixture.manager.isFailedURL(url))
    }

    @Test func cancelAllFailsEveryLoadUnderWay() async throws {
        let gate = Gate()
        server.route("/hold/*") { [picture] _ in
            gate.wait()
            return TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        }
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let tasks = (0..<3).map { index in Task { try await fixture.manager.loadImage(url: server.url("/hold/\(index).png")) } }
        try await waitUntil { server.totalRequestCount == 3 }
        #expect(fixture.manager.isRunning)
        fixture.manager.cancelAll()
        for task in tasks { await #expect(throws: WebImageError.self) { try await task.value } }
        #expect(!fixture.manager.isRunning)
        gate.open()
    }
}
