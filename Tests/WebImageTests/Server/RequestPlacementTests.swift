import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// Where a request is answered (``ImageRequestHandler/dispatch(_:)``): on libmicrohttpd's thread
/// when it needs no waiting; an image request on a cold thread when one waits for work and a
/// processing slot is free below the cold thread count, else on the requests' executor; a warm hit
/// never waits for the busy threads of either pool, nor for Swift's cooperative pool. Serialized:
/// its tests block the server's shared pools or need them free, and two at once would interfere.
@Suite(.serialized) struct RequestPlacementTests {
    let picture: Data

    init() throws {
        picture = try encodedPicture(width: 200, height: 100, as: .jpeg)
    }

    /// Occupies every thread of `executor` until `until`.
    private static func block(_ executor: ThreadPoolExecutor, until: ContinuousClock.Instant) -> [Task<Void, Never>] {
        (0..<executor.threadCount).map { _ in
            Task(executorPreference: executor) { while ContinuousClock.now < until { usleep(1000) } }
        }
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
        let client = ServerLifecycleTests.Client(port: fixture.port, asking: [("health", "/health"), ("disk", path), ("memory", path)])
        for blocker in blockers { await blocker.value }
        let got = try await client.answers()
        #expect(got.map(\.name) == ["health", "disk", "memory"])
        for answer in got {
            #expect(answer.status.hasPrefix("HTTP/1.1 200"), "\(answer.name): \(answer.status)")
            #expect(answer.at < blockedUntil, "\(answer.name) was answered only after the pool was free again")
        }
        #expect(fixture.managerFixture.manager.statistics.variantDiskHits == 1)
        #expect(fixture.managerFixture.manager.statistics.variantMemoryHits == 1)
        await fixture.stop()
    }

    /// Both of the server's pools are blocked for three seconds. A variant in memory, `/health` and
    /// a refused path are answered meanwhile, on libmicrohttpd's own thread; a variant only on disk
    /// needs a thread of one of them, and is answered once they are free again.
    @Test func memoryHitsAreAnsweredOnTheNetworkThreadWhileBothPoolsAreBlocked() async throws {
        let fixture = try await ServerFixture()
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture))
        let inMemory = "/insecure/rs:fit:50:50/plain/\(fixture.source("/photo.jpg"))@png"
        let onDisk = "/insecure/rs:fit:60:60/plain/\(fixture.source("/photo.jpg"))@png"
        #expect(try await fixture.get(inMemory).status == 200)
        #expect(try await fixture.get(onDisk).status == 200)
        await fixture.managerFixture.manager.backgroundWrites.waitUntilIdle()
        fixture.managerFixture.manager.variants.memory.removeAll()   // both only on disk now
        #expect(try await fixture.get(inMemory).status == 200)     // a disk hit, kept in memory
        #expect(fixture.managerFixture.manager.variants.memory.count == 1)
        let blockedUntil = ContinuousClock.now + .seconds(3)
        let blockers = Self.block(ThreadPoolExecutor.requests, until: blockedUntil) + Self.block(ThreadPoolExecutor.coldWork, until: blockedUntil)
        let client = ServerLifecycleTests.Client(port: fixture.port, asking: [("memory", inMemory), ("health", "/health"),
                                                                              ("refused", "/insecure/bad:1/plain/x"), ("disk", onDisk)])
        for blocker in blockers { await blocker.value }
        let got = Dictionary(uniqueKeysWithValues: try await client.answers().map { ($0.name, $0) })
        for name in ["memory", "health", "refused"] {
            let answer = try #require(got[name])
            #expect(answer.at < blockedUntil, "\(name) waited for a pool")
        }
        #expect(got["memory"]?.status.hasPrefix("HTTP/1.1 200") == true)
        #expect(got["health"]?.status.hasPrefix("HTTP/1.1 200") == true)
        #expect(got["refused"]?.status.hasPrefix("HTTP/1.1 400") == true, "\(got["refused"]?.status ?? "")")
        let disk = try #require(got["disk"])
        #expect(disk.status.hasPrefix("HTTP/1.1 200"))
        #expect(disk.at >= blockedUntil, "a disk hit runs on a thread of a pool, and both were blocked")
        await fixture.stop()
    }

    /// Every cold thread is busy: a disk hit answers at once on a request thread; it never queues
    /// behind cold work.
    @Test func aDiskHitNeverWaitsForBusyColdThreads() async throws {
        let fixture = try await ServerFixture()
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture))
        let path = "/insecure/rs:fit:60:60/plain/\(fixture.source("/photo.jpg"))@png"
        #expect(try await fixture.get(path).status == 200)
        await fixture.managerFixture.manager.backgroundWrites.waitUntilIdle()
        fixture.managerFixture.manager.variants.memory.removeAll()
        let blockedUntil = ContinuousClock.now + .seconds(2)
        let blockers = Self.block(ThreadPoolExecutor.coldWork, until: blockedUntil)
        let client = ServerLifecycleTests.Client(port: fixture.port, asking: [("disk", path), ("health", "/health")])
        for blocker in blockers { await blocker.value }
        let got = try await client.answers()
        #expect(got.map(\.name) == ["disk", "health"])
        for answer in got {
            #expect(answer.status.hasPrefix("HTTP/1.1 200"), "\(answer.name): \(answer.status)")
            #expect(answer.at < blockedUntil, "\(answer.name) waited for the busy cold threads")
        }
        #expect(fixture.managerFixture.manager.statistics.variantDiskHits == 1)
        await fixture.stop()
    }

    // MARK: - The decision, on pools of the test's own

    /// One-thread pools of the test's own, so that no other test's work is on them.
    static let requests = ThreadPoolExecutor(name: "test.req", threads: 1, lowered: false)
    static let cold = ThreadPoolExecutor(name: "test.cold", threads: 1, lowered: false)

    /// A handler over the test's pools and `slots`, as ``ImageServer`` makes one.
    private func handler(slots: ProcessingSlots, metrics: ServerMetrics, manager: WebImageManager) -> ImageRequestHandler {
        ImageRequestHandler(manager: manager, config: ImageServerConfig(port: 0, signing: .unsigned, coders: ServerFixture.coders),
                            signers: [], metrics: metrics, slots: slots, state: ServerState(),
                            executors: (requests: Self.requests, coldWork: Self.cold))
    }

    private static let imagePath = "/insecure/rs:fit:60:60/plain/http://127.0.0.1:9/photo.jpg@png"

    /// Which of the test's pools a dispatch puts its task on ("answer" when it answers at once), and
    /// its `abandon` (which gives back a slot taken for it).
    private static func placement(of dispatch: HTTPDispatch) -> (String, () -> Void) {
        switch dispatch {
        case .answer: return ("answer", {})
        case .task(let executor, _, let abandon):
            let pool = executor as? ThreadPoolExecutor
            return (pool === Self.cold ? "cold" : pool === Self.requests ? "requests" : "other", abandon)
        }
    }

    private static func waitUntilIdle(_ pool: ThreadPoolExecutor) async throws {
        let deadline = ContinuousClock.now + busyMachineBound
        while !pool.hasIdleThread && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(pool.hasIdleThread)
    }

    /// An image path goes to the idle cold thread with a reservation (not a slot); with the cold
    /// thread busy, or as many slots and reservations taken as there are cold threads, to the
    /// requests' pool with none.
    @Test func anImageRequestTakesAnIdleColdThreadOnlyWhenOneIsFreeForIt() async throws {
        let managerFixture = ManagerFixture(coders: ServerFixture.coders)
        let metrics = ServerMetrics()
        let slots = ProcessingSlots(limit: 4, queueLimit: 8, metrics: metrics)
        let handler = handler(slots: slots, metrics: metrics, manager: managerFixture.manager)
        let request = HTTPRequest(method: "GET", path: Self.imagePath, accept: nil, ifNoneMatch: nil)
        try await Self.waitUntilIdle(Self.cold)

        let (first, abandonFirst) = Self.placement(of: handler.dispatch(request))
        #expect(first == "cold")
        #expect(slots.reservations == 1)
        #expect(metrics.inFlight.load(ordering: .relaxed) == 0, "a reservation is not a slot")
        // One reservation, one cold thread: the next goes to the requests' pool, reserving nothing.
        let (second, _) = Self.placement(of: handler.dispatch(request))
        #expect(second == "requests")
        #expect(slots.reservations == 1)
        abandonFirst()
        #expect(slots.reservations == 0, "abandon ends the reservation")

        // A slot holder needs the one cold thread too.
        let acquired = await slots.acquire()
        #expect(acquired)
        #expect(Self.placement(of: handler.dispatch(request)).0 == "requests")
        slots.release()

        // The cold thread busy: the requests' pool, though nothing is taken.
        let blockedUntil = ContinuousClock.now + .milliseconds(400)
        let blocker = Task(executorPreference: Self.cold) { while ContinuousClock.now < blockedUntil { usleep(1000) } }
        try await Task.sleep(for: .milliseconds(100))
        #expect(!Self.cold.hasIdleThread)
        #expect(Self.placement(of: handler.dispatch(request)).0 == "requests")
        #expect(slots.reservations == 0)
        await blocker.value
        try await Self.waitUntilIdle(Self.cold)
        let (again, abandonAgain) = Self.placement(of: handler.dispatch(request))
        #expect(again == "cold")
        abandonAgain()
    }

    /// Over a cache other than the built-in one (a shared tier's lookups wait for the network), an
    /// image path always starts on the requests' pool.
    @Test func overAnotherCacheImageRequestsStartOnTheRequestsPool() async throws {
        let managerFixture = ManagerFixture(coders: ServerFixture.coders)
        let manager = WebImageManager(cache: ImageCachesManager(caches: [managerFixture.cache]), loader: managerFixture.downloader,
                                      coders: ServerFixture.coders)
        let metrics = ServerMetrics()
        let slots = ProcessingSlots(limit: 4, queueLimit: 8, metrics: metrics)
        let handler = handler(slots: slots, metrics: metrics, manager: manager)
        try await Self.waitUntilIdle(Self.cold)
        let request = HTTPRequest(method: "GET", path: Self.imagePath, accept: nil, ifNoneMatch: nil)
        #expect(Self.placement(of: handler.dispatch(request)).0 == "requests")
        #expect(slots.reservations == 0)
    }

    /// Paths that are not images go to the requests' pool; refusals and `/health` are answered at once.
    @Test func otherPathsGoToTheRequestsPoolAndRefusalsAreAnsweredAtOnce() async throws {
        let managerFixture = ManagerFixture(coders: ServerFixture.coders)
        let metrics = ServerMetrics()
        let handler = handler(slots: ProcessingSlots(limit: 4, queueLimit: 8, metrics: metrics), metrics: metrics, manager: managerFixture.manager)
        try await Self.waitUntilIdle(Self.cold)
        for path in ["/metrics", "/info/http://127.0.0.1:9/photo.jpg"] {
            let placed = Self.placement(of: handler.dispatch(HTTPRequest(method: "GET", path: path, accept: nil, ifNoneMatch: nil))).0
            #expect(placed == "requests", "\(path)")
        }
        for path in ["/health", "/insecure/bad:1/plain/x"] {
            let placed = Self.placement(of: handler.dispatch(HTTPRequest(method: "GET", path: path, accept: nil, ifNoneMatch: nil))).0
            #expect(placed == "answer", "\(path)")
        }
        #expect(metrics.inFlight.load(ordering: .relaxed) == 0)
    }

    /// A reservation is granted while slots plus reservations are below the ceiling, is not a slot
    /// (not in flight, never in a slot's way), and ends with endReservation.
    @Test func reservationsCountWithSlotsAgainstTheCeilingOnly() async throws {
        let metrics = ServerMetrics()
        let slots = ProcessingSlots(limit: 2, queueLimit: 4, metrics: metrics)
        #expect(slots.tryReserve(below: 2))
        #expect(slots.tryReserve(below: 2))
        #expect(!slots.tryReserve(below: 2), "two reserved: the ceiling of 2 is reached")
        #expect(metrics.inFlight.load(ordering: .relaxed) == 0)
        let first = await slots.acquire(), second = await slots.acquire()
        #expect(first && second, "reservations never hold slots back")
        #expect(metrics.inFlight.load(ordering: .relaxed) == 2)
        slots.endReservation()
        slots.endReservation()
        #expect(slots.reservations == 0)
        #expect(!slots.tryReserve(below: 2), "two slots taken: the ceiling of 2 is reached")
        slots.release()
        #expect(slots.tryReserve(below: 2), "one slot and no reservation")
        #expect(!slots.tryReserve(below: 2))
        slots.endReservation()
        slots.release()
        #expect(metrics.inFlight.load(ordering: .relaxed) == 0)
    }
}
