import CSystemTuning
import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// The server as a service runs it: constructed, run in a task, stopped by cancelling that task;
/// observed beside the manager's own observer; its pools named and prioritized as documented.
/// (Answers while Swift's cooperative pool is saturated: ``RequestPlacementTests``.)
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

    /// The server's two pools: named threads, the cold one at nice 10 and the requests' at the
    /// process's own priority (not inherited from a cold thread).
    @Test func theServersPoolsAreNamedAndOnlyColdWorkIsNiced() async throws {
        let requests = ThreadPoolExecutor.requests, cold = ThreadPoolExecutor.coldWork
        // The pools start their threads without waiting for them: wait until every one has named and
        // placed itself (the event; the deadline is only a guard, generous for a busy machine, where
        // 10 s were seen not to suffice).
        let expected = cold.threadCount + requests.threadCount
        var niceness: [String: Int] = [:]
        let deadline = ContinuousClock.now + .seconds(180) * testTimeScale
        while ContinuousClock.now < deadline {
            niceness = try Self.nicenessOfServerThreads()
            if niceness.count == expected && cold.isLowered { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(cold.isLowered && !requests.isLowered)
        for index in 0..<cold.threadCount { #expect(niceness["webimage.cold-\(index)"] == 10) }
        for index in 0..<requests.threadCount { #expect(niceness["webimage.req-\(index)"] == 0) }
    }

    /// With ``ImageServerConfig/runsNetworkThreadsInRealTime``, libmicrohttpd's threads put
    /// themselves in SCHED_RR before their first request (where the process may: else the server
    /// refuses the configuration); without it they stay in the normal class.
    @Test func networkThreadsRunInTheRealTimeClassOnlyWhenAsked() async throws {
        let normal = try await ServerFixture()
        #expect(try await normal.get("/health").status == 200)
        #expect(normal.server.realtimeNetworkThreadCount == 0)
        await normal.stop()
        guard wi_realtime_permitted(ImageServer.realtimePriority) == 1 else {
            #expect(throws: ServerError.self) {
                try ImageServer(manager: normal.managerFixture.manager,
                                config: ImageServerConfig(port: 0, signing: .unsigned, runsNetworkThreadsInRealTime: true))
            }
            return
        }
        let realtime = try await ServerFixture { $0.runsNetworkThreadsInRealTime = true }
        for _ in 0..<4 { #expect(try await realtime.get("/health").status == 200) }
        #expect(realtime.server.realtimeNetworkThreadCount >= 1)
        #expect(try Self.policiesOfThreads(named: "MHD-worker").contains(2), "no libmicrohttpd thread is in SCHED_RR (2)")
        await realtime.stop()
    }

    /// The threads that answer (libmicrohttpd's, the request executor's) take a short scheduling
    /// slice, so that a woken one runs before a cold thread's codec finishes its own (EEVDF's custom
    /// slice, Linux 6.12 and later; older kernels report none); the cold threads keep the default.
    @Test func answeringThreadsTakeAShortSliceAndColdThreadsDoNot() async throws {
        let fixture = try await ServerFixture()
        for _ in 0..<4 { #expect(try await fixture.get("/health").status == 200) }
        let network = try Self.slicesOfThreads(named: "MHD-worker")   // while the server's threads live
        await fixture.stop()
        let slice = UInt(ThreadPoolExecutor.answeringSlice)
        let release = ProcessInfo.processInfo.operatingSystemVersion
        guard (release.majorVersion, release.minorVersion) >= (6, 12) else {
            #expect(try Self.slicesOfThreads(named: "webimage.req-0").allSatisfy { $0 == 0 }, "an older kernel reports no slice")
            return
        }
        #expect(network.contains(slice), "no libmicrohttpd thread took the slice")
        // The pools' threads start on their own after the pools are made: wait until all are there
        // and have set themselves up (a thread sets its slice just after naming itself).
        var requests: [[UInt]] = [], cold: [[UInt]] = []
        let deadline = ContinuousClock.now + busyMachineBound
        repeat {
            requests = try (0..<ThreadPoolExecutor.requests.threadCount).map { try Self.slicesOfThreads(named: "webimage.req-\($0)") }
            cold = try (0..<ThreadPoolExecutor.coldWork.threadCount).map { try Self.slicesOfThreads(named: "webimage.cold-\($0)") }
            if requests.allSatisfy({ $0 == [slice] }) && cold.allSatisfy({ !$0.isEmpty }) { break }
            try await Task.sleep(for: .milliseconds(10))
        } while ContinuousClock.now < deadline
        #expect(requests.allSatisfy { $0 == [slice] }, "the request executor's threads: \(requests)")
        #expect(cold.allSatisfy { !$0.isEmpty && !$0.contains(slice) }, "cold threads keep the kernel's slice: \(cold)")
    }

    /// The scheduling slice (`wi_thread_slice`) of each of this process's threads named `name`.
    private static func slicesOfThreads(named name: String) throws -> [UInt] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name, let thread = Int32(task) else { return nil }
            return wi_thread_slice(thread)
        }
    }

    /// A thread put in the real-time class does not hand it on: a thread it creates starts in the
    /// normal class (a libdispatch worker made from a network thread must not run cold work in it).
    @Test func aRealtimeThreadsChildrenAreNormal() async throws {
        guard wi_realtime_permitted(ImageServer.realtimePriority) == 1 else {
            #expect(wi_thread_set_realtime(ImageServer.realtimePriority) == 0, "refused where not permitted")
            return
        }
        let policies = Mutex<(parent: Int32, child: Int32)?>(nil)
        Thread {
            _ = wi_thread_set_realtime(ImageServer.realtimePriority)
            let parent = sched_getscheduler(0)
            let child = Thread { policies.withLock { $0 = (parent, sched_getscheduler(0)) } }
            child.start()
        }.start()
        let deadline = ContinuousClock.now + busyMachineBound
        while policies.withLock({ $0 }) == nil && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        let seen = try #require(policies.withLock { $0 })
        let resetOnFork: Int32 = 0x4000_0000   // SCHED_RESET_ON_FORK, reported with the policy
        #expect(seen.parent & ~resetOnFork == SCHED_RR && seen.parent & resetOnFork != 0, "the thread itself: SCHED_RR, reset on fork")
        #expect(seen.child == SCHED_OTHER, "its child is not")
    }

    /// The scheduling policy (`/proc/self/task/N/stat`'s 41st field: 0 normal, 2 SCHED_RR) of each of
    /// this process's threads named `name`.
    private static func policiesOfThreads(named name: String) throws -> [Int] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  comm.trimmingCharacters(in: .whitespacesAndNewlines) == name,
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let end = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 38 ? Int(fields[38]) : nil
        }
    }

    /// The nice value of each of this process's threads named `webimage.req-N` or `webimage.cold-N`.
    private static func nicenessOfServerThreads() throws -> [String: Int] {
        var niceness: [String: Int] = [:]
        for task in try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8) else { continue }   // a thread that ended
            let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
            guard name.hasPrefix("webimage.req-") || name.hasPrefix("webimage.cold-"), let end = stat.lastIndex(of: ")") else { continue }
            // Fields after the parenthesised name: state is the 3rd field, nice the 19th.
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            niceness[name] = Int(fields[16])
        }
        return niceness
    }

    /// A client thread that waits 300 ms (for the blockers to take their threads), then GETs each
    /// target in turn over a blocking socket, noting each answer's status line and when it arrived.
    final class Client: Sendable {
        typealias Answer = (name: String, status: String, at: ContinuousClock.Instant)
        private let received = Mutex<[Answer]>([])
        private let count: Int

        init(port: UInt16, asking targets: [(name: String, path: String)]) {
            count = targets.count
            Thread { [self] in
                usleep(300_000)
                for (name, target) in targets {
                    let status = ServerLifecycleTests.statusLine(port: port, path: target)
                    received.withLock { $0.append((name, status, ContinuousClock.now)) }
                }
            }.start()
        }

        /// Every answer, in order, once all have arrived (at most `busyMachineBound`).
        func answers() async throws -> [Answer] {
            let deadline = ContinuousClock.now + busyMachineBound
            while received.withLock({ $0.count }) < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            return received.withLock { $0 }
        }
    }

    /// The status line of a GET, over a blocking socket on the calling thread.
    fileprivate static func statusLine(port: UInt16, path: String) -> String {
        guard let connection = HostileClientTests.RawConnection(port: port) else { return "no connection" }
        _ = connection.sendBlocking("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return String(connection.readAllBlocking().text.prefix { $0 != "\r" })
    }
}
