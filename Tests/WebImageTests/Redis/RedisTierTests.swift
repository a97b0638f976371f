import Foundation
import Testing
@testable import WebImage
@testable import WebImageRedis

/// The tier against real `redis-server` processes on loopback.
@Suite struct RedisTierTests {
    static func config(_ endpoints: [RedisEndpoint], _ change: (inout RedisTierConfig) -> Void = { _ in }) -> RedisTierConfig {
        var config = RedisTierConfig(endpoints: endpoints, namespace: "test", connectTimeout: .seconds(2), commandTimeout: .seconds(5),
                                     connectionsPerNode: 2)
        change(&config)
        return config
    }

    static let bytes = Data([0x89, 0x50, 0x4E, 0x47] + (0..<5000).map { UInt8($0 % 251) })

    @Test func storesAndReadsBytesWithTheirMetadataUnderANamespacedVersionedKey() async throws {
        let redis = try await RedisServerProcess()
        let tier = RedisTier(config: Self.config([redis.endpoint]))
        defer { tier.close() }
        let metadata = DiskCacheMetadata(entityTag: "\"v1\"", maxAge: 600, pixelSize: PixelSize(width: 64, height: 48))
        #expect(await tier.value(forKey: "https://example.com/a.png") == nil)
        #expect(await tier.setValue(Self.bytes, metadata: metadata, forKey: "https://example.com/a.png"))
        let hit = try #require(await tier.value(forKey: "https://example.com/a.png"))
        #expect(hit.data == Self.bytes && hit.metadata == metadata)
        let key = try #require(tier.location(forKey: "https://example.com/a.png")).key
        #expect(key == "webimage:v1:test:" + MD5.hex(Array("https://example.com/a.png".utf8)))
        #expect(try redis.command(["EXISTS", key]) == .integer(1))
        #expect(await tier.containsValue(forKey: "https://example.com/a.png"))
        let other = RedisTier(config: Self.config([redis.endpoint]) { $0.namespace = "other" })
        defer { other.close() }
        #expect(await other.value(forKey: "https://example.com/a.png") == nil, "another namespace sees nothing")
        await tier.removeValue(forKey: "https://example.com/a.png")
        #expect(await tier.value(forKey: "https://example.com/a.png") == nil)
        let statistics = tier.statistics
        #expect(statistics.hits == 1 && statistics.misses == 2 && statistics.stores == 1 && statistics.errors == 0)
        #expect(statistics.timeSpent > .zero)
    }

    @Test func entriesExpireAfterTheirTimeToLive() async throws {
        let redis = try await RedisServerProcess()
        let lasting = RedisTier(config: Self.config([redis.endpoint]) { $0.timeToLive = .seconds(3600) })
        let brief = RedisTier(config: Self.config([redis.endpoint]) { $0.timeToLive = .milliseconds(200) })
        defer { lasting.close(); brief.close() }
        #expect(await lasting.setValue(Self.bytes, metadata: nil, forKey: "hour"))
        let key = try #require(lasting.location(forKey: "hour")).key
        guard case .integer(let ttl) = try redis.command(["PTTL", key]) else { Issue.record("no PTTL"); return }
        #expect(ttl > 3_000_000 && ttl <= 3_600_000, "SET … PX: \(ttl) ms left")
        #expect(await brief.setValue(Self.bytes, metadata: nil, forKey: "brief"))
        let briefKey = try #require(brief.location(forKey: "brief")).key
        let deadline = ContinuousClock.now + busyMachineBound
        while try redis.command(["EXISTS", briefKey]) == .integer(1), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await brief.value(forKey: "brief") == nil, "Redis dropped it after its time to live")
        #expect(await lasting.value(forKey: "hour")?.data == Self.bytes)
    }

    @Test func oversizeValuesStayLocal() async throws {
        let redis = try await RedisServerProcess()
        let tier = RedisTier(config: Self.config([redis.endpoint]) { $0.maxValueBytes = 4096 })
        defer { tier.close() }
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "big") == false)
        #expect(await tier.setValue(Self.bytes.prefix(4096), metadata: nil, forKey: "small"))
        #expect(try redis.keyCount() == 1)
        #expect(tier.statistics.oversizeSkipped == 1)
    }

    @Test func corruptAndForeignValuesAreMissesAndAreDeleted() async throws {
        let redis = try await RedisServerProcess()
        let tier = RedisTier(config: Self.config([redis.endpoint]))
        defer { tier.close() }
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "flipped"))
        let flippedKey = try #require(tier.location(forKey: "flipped")).key
        guard case .string(var value) = try redis.command(["GET", flippedKey]) else { Issue.record("not stored"); return }
        value[value.count / 2] ^= 1
        try redis.setRaw(flippedKey, value)
        let foreignKey = try #require(tier.location(forKey: "foreign")).key
        try redis.setRaw(foreignKey, Data("{\"not\":\"ours\"}".utf8))
        #expect(await tier.value(forKey: "flipped") == nil)
        #expect(await tier.value(forKey: "foreign") == nil)
        #expect(try redis.keyCount() == 0, "both deleted")
        #expect(tier.statistics.corruptRemoved == 2)
        let listKey = try #require(tier.location(forKey: "list")).key
        _ = try redis.command(["RPUSH", listKey, "x"])
        #expect(await tier.value(forKey: "list") == nil, "a WRONGTYPE error reply is a miss")
        #expect(tier.statistics.errors == 1)
    }

    @Test func logsInWithAUTHAndAWrongPasswordIsAMiss() async throws {
        let redis = try await RedisServerProcess(password: "hunter2")
        let tier = RedisTier(config: Self.config([redis.endpoint]))
        defer { tier.close() }
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "k"))
        #expect(await tier.value(forKey: "k")?.data == Self.bytes)
        var wrong = redis.endpoint
        wrong.password = "wrong"
        let refused = RedisTier(config: Self.config([wrong]))
        defer { refused.close() }
        #expect(await refused.value(forKey: "k") == nil)
        #expect(await refused.setValue(Self.bytes, metadata: nil, forKey: "j") == false)
        #expect(refused.statistics.errors == 2)
        var none = redis.endpoint
        none.password = nil
        let anonymous = RedisTier(config: Self.config([none]))
        defer { anonymous.close() }
        #expect(await anonymous.value(forKey: "k") == nil, "NOAUTH is a miss")
    }

    @Test func keysSpreadOverThreeServersAndADeadOneCostsOnlyItsShare() async throws {
        let servers = [try await RedisServerProcess(), try await RedisServerProcess(), try await RedisServerProcess()]
        let tier = RedisTier(config: Self.config(servers.map(\.endpoint)) {
            $0.connectTimeout = .milliseconds(200)
            $0.commandTimeout = .milliseconds(200)
        })
        defer { tier.close() }
        let keys = (0..<60).map { "https://example.com/\($0).jpg" }
        for key in keys { #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: key)) }
        let counts = try servers.map { try $0.keyCount() }
        #expect(counts.reduce(0, +) == 60 && counts.allSatisfy { $0 >= 8 }, "\(counts)")
        await servers[1].kill()
        var hits = 0
        for key in keys where await tier.value(forKey: key) != nil { hits += 1 }
        #expect(hits == counts[0] + counts[2], "only the dead server's share misses")
    }

    @Test func aServerThatNeverAnswersCostsOnlyTheTimeoutsAndThenTheBreakerSkipsIt() async throws {
        let silent = try SilentListener()
        let tier = RedisTier(config: Self.config([RedisEndpoint(host: "127.0.0.1", port: silent.port)]) {
            $0.connectTimeout = .milliseconds(100)
            $0.commandTimeout = .milliseconds(100)
            $0.failureThreshold = 3
            $0.breakerCooldown = .seconds(3600)
        })
        defer { tier.close() }
        // The socket timeout ends a command the server never answers (without it, this would hang).
        let node = try #require(tier.location(forKey: "a")).node
        await #expect(throws: RedisError.timedOut(endpoint: node.endpoint.description)) { try await node.run([[Data("GET".utf8), Data("a".utf8)]]) }
        #expect(await tier.value(forKey: "a") == nil)
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "b") == false)
        for _ in 0..<20 { #expect(await tier.value(forKey: "c") == nil) }
        let statistics = tier.statistics
        #expect(statistics.breakerOpenings == 1 && statistics.skippedWhileOpen == 20 && statistics.errors == 22,
                "three timeouts opened the breaker; the rest were skipped without waiting")
    }

    @Test func aServerAnsweringGarbageIsAMissAndThenSkipped() async throws {
        let garbage = try GarbageServer()
        let tier = RedisTier(config: Self.config([RedisEndpoint(host: "127.0.0.1", port: garbage.port)]) {
            $0.failureThreshold = 3
            $0.breakerCooldown = .seconds(3600)
        })
        defer { tier.close() }
        for index in 0..<6 { #expect(await tier.value(forKey: "\(index)") == nil) }
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "x") == false)
        let statistics = tier.statistics
        #expect(statistics.errors == 7 && statistics.breakerOpenings == 1 && statistics.skippedWhileOpen == 4)
    }

    @Test func aServerTricklingItsReplyIsCutOffByTheCallLimit() async throws {
        let trickling = try TricklingServer()
        let tier = RedisTier(config: Self.config([RedisEndpoint(host: "127.0.0.1", port: trickling.port)]) {
            $0.connectTimeout = .milliseconds(100)
            $0.commandTimeout = .milliseconds(100)   // each read gets a byte within it: only the call limit ends the command
            $0.breakerCooldown = .seconds(3600)
        })
        defer { tier.close() }
        #expect(await tier.value(forKey: "k") == nil)
        #expect(tier.statistics.errors == 1)
    }

    @Test func nodeWideErrorRepliesCountAgainstTheBreakerAndCommandErrorsDoNot() {
        #expect(RedisNode.isNodeUnusable(.error("LOADING Redis is loading the dataset in memory")))
        #expect(RedisNode.isNodeUnusable(.error("READONLY You can't write against a read only replica.")))
        #expect(RedisNode.isNodeUnusable(.error("NOAUTH Authentication required.")))
        #expect(!RedisNode.isNodeUnusable(.error("OOM command not allowed when used memory > 'maxmemory'.")))
        #expect(!RedisNode.isNodeUnusable(.error("WRONGTYPE Operation against a key holding the wrong kind of value")))
        #expect(!RedisNode.isNodeUnusable(.string(Data("LOADING".utf8))))
    }

    @Test func removeAllMatchesItsNamespaceLiterally() async throws {
        let redis = try await RedisServerProcess()
        let glob = RedisTier(config: Self.config([redis.endpoint]) { $0.namespace = "a*" })
        let other = RedisTier(config: Self.config([redis.endpoint]) { $0.namespace = "ab" })
        defer { glob.close(); other.close() }
        await glob.setValue(Self.bytes, metadata: nil, forKey: "1")
        await other.setValue(Self.bytes, metadata: nil, forKey: "2")
        await glob.removeAll()
        #expect(await glob.value(forKey: "1") == nil)
        #expect(await other.value(forKey: "2") != nil, "'a*' is not a pattern for 'ab'")
    }

    @Test func aFullRedisRefusesWritesAndReadsGoOn() async throws {
        let redis = try await RedisServerProcess(arguments: ["--maxmemory", "2mb", "--maxmemory-policy", "noeviction"])
        let tier = RedisTier(config: Self.config([redis.endpoint]))
        defer { tier.close() }
        var stored: [String] = []
        var refused = 0
        for index in 0..<2000 where refused == 0 {
            if await tier.setValue(Self.bytes, metadata: nil, forKey: "\(index)") { stored.append("\(index)") } else { refused += 1 }
        }
        #expect(refused == 1, "noeviction: a full Redis answers -OOM")
        #expect(tier.statistics.errors == 1 && tier.statistics.breakerOpenings == 0, "an error reply is not a dead server")
        if let first = stored.first { #expect(await tier.value(forKey: first)?.data == Self.bytes, "reads go on") }
    }

    @Test func aKilledServerIsSkippedThenReconnectedWhenItIsBack() async throws {
        let redis = try await RedisServerProcess()
        let tier = RedisTier(config: Self.config([redis.endpoint]) {
            $0.connectTimeout = .milliseconds(200)
            $0.commandTimeout = .milliseconds(200)
            $0.connectionsPerNode = 4
            $0.failureThreshold = 1
            $0.breakerCooldown = .milliseconds(100)
        })
        defer { tier.close() }
        // Every connection open: concurrent writes keep the workers busy.
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<32 { group.addTask { await tier.setValue(Self.bytes, metadata: nil, forKey: "before-\(index)") } }
        }
        #expect(try redis.keyCount() == 32)
        await redis.kill()
        #expect(await tier.value(forKey: "before-0") == nil, "a dead Redis is a miss")
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "during") == false, "skipped, or refused if cooled down")
        #expect(tier.statistics.breakerOpenings >= 1)
        try await redis.start()
        try await Task.sleep(for: .milliseconds(150))   // past the cooldown: the next command is the probe
        #expect(await tier.setValue(Self.bytes, metadata: nil, forKey: "after"), "the probe reconnects: no stale connection fails it")
        #expect(await tier.value(forKey: "after")?.data == Self.bytes)
    }

    @Test func oneProcessFillsWhileTheOthersWaitForItsValue() async throws {
        let redis = try await RedisServerProcess()
        // Hour-long claim and wait: a stalled test process must not outlast either.
        let holder = RedisTier(config: Self.config([redis.endpoint]) { $0.fillClaimTimeToLive = .seconds(3600) })
        let waiter = RedisTier(config: Self.config([redis.endpoint]) { $0.maxFillWait = .seconds(3600) })
        defer { holder.close(); waiter.close() }
        #expect(await holder.beginFill(forKey: "k") == nil, "claimed")
        let waiting = Task { await waiter.beginFill(forKey: "k") }
        let deadline = ContinuousClock.now + busyMachineBound
        while waiter.statistics.misses < 2 {   // until it has looked twice and is waiting
            guard ContinuousClock.now < deadline else { Issue.record("the waiter never looked"); return }
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(await holder.setValue(Self.bytes, metadata: nil, forKey: "k"))
        #expect(await waiting.value?.data == Self.bytes)
        #expect(holder.statistics.fillsClaimed == 1 && waiter.statistics.fillsJoined == 1 && waiter.statistics.fillsClaimed == 0)
        let claimKey = try #require(holder.location(forKey: "k")).key + ":fill"
        #expect(try redis.command(["EXISTS", claimKey]) == .integer(0), "the store released the claim")
    }

    @Test func aDeadHoldersClaimExpiresAndAnAbandonedOneEndsAtOnce() async throws {
        let redis = try await RedisServerProcess()
        let crashed = RedisTier(config: Self.config([redis.endpoint]) { $0.fillClaimTimeToLive = .milliseconds(300) })
        let other = RedisTier(config: Self.config([redis.endpoint]) { $0.maxFillWait = .seconds(3600) })
        defer { crashed.close(); other.close() }
        #expect(await crashed.beginFill(forKey: "k") == nil)
        crashed.close()   // the holder dies without storing or releasing
        // Its claim ends by itself: `other`, willing to wait an hour, claims the key once it expires.
        #expect(await other.beginFill(forKey: "k") == nil, "claimed after the dead holder's claim expired")
        #expect(other.statistics.fillsClaimed == 1 && other.statistics.fillWaitsTimedOut == 0)
        await other.endFill(forKey: "k")
        let third = RedisTier(config: Self.config([redis.endpoint]))
        defer { third.close() }
        #expect(await third.beginFill(forKey: "k") == nil)
        #expect(third.statistics.fillsClaimed == 1 && third.statistics.misses == 1, "claimed at once: the abandoned claim was gone")
    }

    @Test func removeAllClearsOnlyItsNamespace() async throws {
        let redis = try await RedisServerProcess()
        let tier = RedisTier(config: Self.config([redis.endpoint]))
        let other = RedisTier(config: Self.config([redis.endpoint]) { $0.namespace = "other" })
        defer { tier.close(); other.close() }
        for index in 0..<30 { await tier.setValue(Self.bytes, metadata: nil, forKey: "\(index)") }
        await other.setValue(Self.bytes, metadata: nil, forKey: "kept")
        await tier.removeAll()
        #expect(try redis.keyCount() == 1)
        #expect(await other.value(forKey: "kept") != nil)
    }
}
