import Foundation
import Testing
@testable import WebImage
@testable import WebImageRedis
import Synchronization

/// The shared tier's pure parts: endpoint URLs, the value envelope, node hashing, the breaker.
@Suite struct RedisPartsTests {
    @Test func parsesRedisURLs() throws {
        let full = try #require(RedisEndpoint(url: "redis://:s%40cret@cache.internal:6380/3"))
        #expect(full.host == "cache.internal" && full.port == 6380 && full.password == "s@cret" && full.user == nil && full.database == 3)
        let user = try #require(RedisEndpoint(url: "redis://app:pw@10.0.0.1"))
        #expect(user.user == "app" && user.password == "pw" && user.port == 6379 && user.database == 0)
        let v6 = try #require(RedisEndpoint(url: "redis://[::1]:7000"))
        #expect(v6.host == "::1" && v6.port == 7000 && v6.description == "redis://[::1]:7000/0")
        #expect(full.description == "redis://cache.internal:6380/3", "no password in descriptions")
        for bad in ["http://host:6379", "redis://", "redis://host:0", "redis://host:70000", "redis://host/db", "host:6379"] {
            #expect(RedisEndpoint(url: bad) == nil, "\(bad)")
        }
    }

    @Test func theEnvelopeRoundTripsAndRefusesAnythingElse() throws {
        let metadata = DiskCacheMetadata(entityTag: "\"abc\"", lastModified: "Tue, 24 Nov 2026 05:00:00 GMT", maxAge: 60,
                                         extendedData: Data([1, 2, 3]), pixelSize: PixelSize(width: 320, height: 200))
        let data = Data([0xFF, 0xD8, 0xFF, 0xE0] + Array(repeating: 7, count: 1000))
        let contents = RedisEnvelope.Contents(data: data, format: .jpeg, expiresAt: Date(timeIntervalSince1970: 1_900_000_000.5),
                                              metadata: metadata)
        let value = RedisEnvelope.encode(contents)
        #expect(RedisEnvelope.decode(value) == contents)
        let bare = RedisEnvelope.Contents(data: Data(), format: .png, expiresAt: Date(timeIntervalSince1970: 1), metadata: nil)
        #expect(RedisEnvelope.decode(RedisEnvelope.encode(bare)) == bare)
        for index in [0, 4, 5, 20, value.count / 2, value.count - 1] {
            var flipped = value
            flipped[index] ^= 0x40
            #expect(RedisEnvelope.decode(flipped) == nil, "byte \(index) flipped")
        }
        #expect(RedisEnvelope.decode(value.prefix(value.count - 1)) == nil, "truncated")
        #expect(RedisEnvelope.decode(value + Data([0])) == nil, "trailing byte")
        #expect(RedisEnvelope.decode(Data("some other program's value".utf8)) == nil, "foreign")
        #expect(RedisEnvelope.decode(Data()) == nil)
    }

    @Test func rendezvousHashingSpreadsKeysAndMovesOnlyTheNewNodesShare() {
        let three = RendezvousHashing(names: ["a:6379/0", "b:6379/0", "c:6379/0"])
        let four = RendezvousHashing(names: ["a:6379/0", "b:6379/0", "c:6379/0", "d:6379/0"])
        var counts = [0, 0, 0]
        var moved = 0
        var movedElsewhere = 0
        for index in 0..<3000 {
            let hash = RendezvousHashing.fnv1a("key-\(index)".utf8)
            let before = three.node(for: hash)
            counts[before] += 1
            let after = four.node(for: hash)
            if after != before {
                moved += 1
                if after != 3 { movedElsewhere += 1 }
            }
        }
        #expect(counts.allSatisfy { (800...1200).contains($0) }, "\(counts)")
        #expect((500...1000).contains(moved), "about a quarter moves: \(moved)")
        #expect(movedElsewhere == 0, "keys move only to the new node")
    }

    @Test func theBreakerOpensAfterTheThresholdAndProbesAfterTheCooldown() {
        let breaker = CircuitBreaker(threshold: 3, cooldown: .seconds(2))
        let start = ContinuousClock.now
        breaker.recordFailure(now: start)
        breaker.recordFailure(now: start)
        #expect(breaker.decide(now: start) == .allow, "below the threshold")
        breaker.recordFailure(now: start)
        #expect(breaker.decide(now: start + .seconds(1)) == .skip, "open")
        #expect(breaker.openings == 1)
        #expect(breaker.decide(now: start + .seconds(3)) == .allow, "the probe")
        #expect(breaker.decide(now: start + .seconds(3)) == .skip, "one probe at a time")
        breaker.recordFailure(now: start + .seconds(3))
        #expect(breaker.decide(now: start + .seconds(4)) == .skip, "a failed probe opens it again")
        #expect(breaker.openings == 2)
        #expect(breaker.decide(now: start + .seconds(6)) == .allow)
        breaker.recordSuccess()
        #expect(breaker.decide(now: start + .seconds(6)) == .allow && breaker.decide(now: start + .seconds(6)) == .allow, "closed")
    }

    /// A node's job queue: a worker waiting on it gets a job pushed while it spins and one pushed
    /// after it has gone to sleep, in order; a full queue refuses; closing ends a waiting worker.
    @Test func theJobQueueHandsJobsToASpinningOrSleepingWorkerAndCloses() async throws {
        let queue = JobQueue(limit: 2, spin: .milliseconds(20))
        let taken = Mutex<[Int]>([])
        let ended = Atomic<Bool>(false)
        let worker = Thread {
            while let job = queue.pop() { taken.withLock { $0.append(job.commands.count) }; job.complete(.success([])) }
            ended.store(true, ordering: .releasing)
        }
        worker.start()
        func job(_ size: Int) -> Job {
            Job(commands: Array(repeating: [], count: size), deadline: .now + .seconds(60)) { _ in }
        }
        #expect(queue.push(job(1)))   // taken at once, or while the worker spins
        try await Task.sleep(for: .milliseconds(200))   // past the spin: the worker sleeps on the condition
        #expect(queue.push(job(2)))
        try await waitUntil { taken.withLock { $0.count } >= 2 }
        #expect(taken.withLock { $0 } == [1, 2])
        queue.close()
        #expect(!queue.push(job(3)), "a closed queue takes nothing")
        try await waitUntil { ended.load(ordering: .acquiring) }   // closing ends the waiting worker
        let full = JobQueue(limit: 1, spin: .zero)
        #expect(full.push(job(1)) && !full.push(job(1)), "past its limit a queue refuses")
    }

    /// A push while a worker spins is left to it: no signal, so no sleeping worker is woken to race for it.
    @Test func aJobPushedWhileAWorkerSpinsWakesNoSleeper() async throws {
        // It spins as long as the test may take (a loaded ThreadSanitizer run starved this test past a
        // 30 s spin, and the worker went to sleep before the test looked), and stops once closed.
        let queue = JobQueue(limit: 4, spin: busyMachineBound)
        defer { queue.close() }
        let taken = Atomic<Int>(0)
        let worker = Thread {
            while let job = queue.pop() { taken.add(1, ordering: .releasing); job.complete(.success([])) }
        }
        worker.start()
        func job() -> Job { Job(commands: [], deadline: .now + .seconds(60)) { _ in } }
        for expected in 1...3 {
            // Pushed once the worker spins (it found nothing): on a busy machine it may not have run at
            // all yet, and a push before it spins rightly signals.
            try await waitUntil { queue.spinningWorkers == 1 }
            #expect(queue.push(job()))
            try await waitUntil { taken.load(ordering: .acquiring) >= expected }
        }
        #expect(taken.load(ordering: .acquiring) == 3)
        #expect(queue.signals.load(ordering: .relaxed) == 0, "every job was taken by the spinning worker, unsignalled")
        let sleeping = JobQueue(limit: 4, spin: .zero)
        #expect(sleeping.push(job()))
        #expect(sleeping.signals.load(ordering: .relaxed) == 1, "without a spinning worker a push signals")
        sleeping.close()
    }

    /// A connection waits for a reply by spinning only while replies come within the spin: one that took
    /// 50 ms (BLPOP's timeout on an empty list) turns it off.
    @Test func aSlowReplyStopsTheConnectionSpinning() async throws {
        let server = try await RedisServerProcess()
        let connection = RedisConnection(endpoint: server.endpoint, connectTimeout: .seconds(2), commandTimeout: .seconds(5))
        #expect(connection.repliesComeFast, "a new connection spins for its first reply")
        let replies = try connection.run([[Data("BLPOP".utf8), Data("no-such-list".utf8), Data("0.05".utf8)]])
        #expect(replies.count == 1 && replies[0].errorText == nil)
        #expect(!connection.repliesComeFast, "a reply later than the spin turns it off")
        guard case .status(let pong) = try connection.run([[Data("PING".utf8)]])[0] else {
            Issue.record("PING answered something other than a status")
            return
        }
        #expect(pong == "PONG")
    }
}
