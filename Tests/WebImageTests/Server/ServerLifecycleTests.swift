import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// The server as a service runs it: constructed, run in a task, stopped by cancelling that task;
/// observed beside the manager's own observer; and answering `/health` and warm hits while
/// Swift's cooperative pool is saturated by other work of the process.
@Suite struct ServerLifecycleTests {
    let picture: Data

    init() throws {
        picture = try encodedPicture(width: 200, height: 100, as: .jpeg)
    }

    /// An observer that counts the variant reports it receives.
    final class VariantCounter: WebImageObserver {
        let count = Atomic<Int>(0)

        func observe(_ event: WebImageEvent) {
            if case .variantFinished = event { count.add(1, ordering: .relaxed) }
        }
    }

    @Test func itRunsUntilCancelledAndLeavesTheManagersObserverInPlace() async throws {
        let own = VariantCounter()
        let fixture = try await ServerFixture()
        fixture.managerFixture.manager.observer = own
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture))
        #expect(try await fixture.get("/insecure/w:40/plain/\(fixture.source("/photo.jpg"))@png").status == 200)
        #expect(own.count.load(ordering: .relaxed) == 1, "the manager's own observer still gets every report")
        let metrics = String(decoding: try await fixture.get("/metrics").body, as: UTF8.self)
        #expect(metrics.contains("webimage_results_total{tier=\"network\"} 1"), "and the server's metrics too: \(metrics)")
        #expect(fixture.managerFixture.manager.observer is VariantCounter, "the server replaced nothing")

        await #expect(throws: ServerError.alreadyRunning) { try await fixture.server.run() }
        fixture.running.cancel()
        try await fixture.running.value   // returns (no error) once drained
        #expect(fixture.server.pendingRequests == 0)
        _ = try await fixture.managerFixture.manager.loadVariant(url: fixture.sources.url("/photo.jpg"), format: .exactly(.jpeg))
        #expect(own.count.load(ordering: .relaxed) == 2)
        #expect(!metrics.isEmpty && fixture.server.metrics.render().contains("webimage_results_total{tier=\"network\"} 1"),
                "a stopped server observes nothing any more")
        await fixture.managerFixture.manager.shutdown()
        fixture.sources.stop()
    }

    @Test func anAddressInUseIsThrownByRun() async throws {
        let fixture = try await ServerFixture()
        let second = try ImageServer(manager: fixture.managerFixture.manager,
                                     config: ImageServerConfig(port: fixture.port, signing: .unsigned))
        await #expect(throws: ServerError.self) { try await second.run { _ in Issue.record("it listened on a port in use") } }
        await fixture.stop()
    }

    /// Every thread of the cooperative pool is blocked for three seconds; meanwhile a client on a
    /// dispatch thread gets `/health`, a warm variant from disk and the same one from memory. Each
    /// answer must arrive while the pool is still blocked.
    @Test func healthAndWarmHitsAnswerWhileTheCooperativePoolIsSaturated() async throws {
        let fixture = try await ServerFixture(managerConfig: WebImageManagerConfig(variantMemoryAdmission: .whenReused))
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture))
        let path = "/insecure/rs:fit:50:50/plain/\(fixture.source("/photo.jpg"))@png"
        #expect(try await fixture.get(path).status == 200)
        await fixture.managerFixture.manager.backgroundWrites.waitUntilIdle()   // the variant is on disk

        let blockedUntil = ContinuousClock.now + .seconds(3)
        let blockers = (0..<2 * ProcessInfo.processInfo.activeProcessorCount).map { _ in
            Task.detached { while ContinuousClock.now < blockedUntil { usleep(1000) } }
        }
        let answers = Mutex<[(name: String, status: String, at: ContinuousClock.Instant)]>([])
        let port = fixture.port
        let client = Thread {
            usleep(300_000)   // the blockers take the pool's threads
            for (name, target) in [("health", "/health"), ("disk", path), ("memory", path)] {
                let status = Self.statusLine(port: port, path: target)
                answers.withLock { $0.append((name, status, ContinuousClock.now)) }
            }
        }
        client.start()
        for blocker in blockers { await blocker.value }
        let deadline = ContinuousClock.now + .seconds(30)
        while answers.withLock({ $0.count }) < 3 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let got = answers.withLock { $0 }
        #expect(got.map(\.name) == ["health", "disk", "memory"])
        for answer in got {
            #expect(answer.status.hasPrefix("HTTP/1.1 200"), "\(answer.name): \(answer.status)")
            #expect(answer.at < blockedUntil, "\(answer.name) was answered only after the pool was free again")
        }
        #expect(fixture.managerFixture.manager.statistics.variantDiskHits == 1)
        #expect(fixture.managerFixture.manager.statistics.variantMemoryHits == 1)
        await fixture.stop()
    }

    /// The status line of a GET, over a blocking socket on the calling thread.
    private static func statusLine(port: UInt16, path: String) -> String {
        guard let connection = HostileClientTests.RawConnection(port: port) else { return "no connection" }
        _ = connection.sendBlocking("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return String(connection.readAllBlocking().text.prefix { $0 != "\r" })
    }
}
