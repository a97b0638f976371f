import Foundation
import Synchronization
import WebImage

/// The fleet's shared tier of encoded bytes on one or more Redis servers: what ``RedisImageCache``
/// puts behind a process's memory and disk tiers.
///
/// - **Keys** are `webimage:v1:<namespace>:<md5 of the cache key>`, spread over the servers by
///   rendezvous hashing (adding a server moves only its share; a dead one costs only its share).
/// - **Values** are ``RedisEnvelope``s: bytes, format, validators and expiry, checked on read; a
///   value that does not parse is a miss and is deleted. Entries live ``RedisTierConfig/timeToLive``
///   (`SET … PX`); larger than ``RedisTierConfig/maxValueBytes``, they are not sent.
/// - **Fleet-wide single flight**: ``beginFill(forKey:)`` claims a missing key with
///   `SET <key>:fill <token> NX PX <ttl>`; other processes wait (bounded) for the value to appear
///   instead of fetching it too. The holder's store releases the claim; a holder that dies delays
///   the others by at most ``RedisTierConfig/fillClaimTimeToLive``.
/// - **Failure is a miss**: every method returns within the configured timeouts whatever the
///   servers do (down, slow, restarted, out of memory, answering garbage), counts the failure in
///   ``statistics``, and reconnects by itself; a server that keeps failing is skipped by its
///   circuit breaker for ``RedisTierConfig/breakerCooldown``, then probed.
public final class RedisTier: Sendable {
    /// The configuration the tier was created with.
    public let config: RedisTierConfig
    private let nodes: [RedisNode]
    private let hashing: RendezvousHashing
    private let prefix: String
    private let counters = StatisticsCounters(RedisTierStatistics())
    /// Fill claims this process holds: Redis claim key → token.
    private let claims = Mutex([String: String]())
    private let tokenPrefix = "\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)-"
    private let nextToken = Atomic<Int>(0)

    /// Starts the connection threads of every server in `config` (connections open on first use).
    /// Never throws and never blocks: an unreachable server is found out by the first command.
    public init(config: RedisTierConfig) {
        self.config = config
        nodes = config.endpoints.map { RedisNode(endpoint: $0, config: config) }
        hashing = RendezvousHashing(names: config.endpoints.map { "\($0.host):\($0.port)/\($0.database)" })
        prefix = "webimage:v1:\(config.namespace):"
    }

    /// The Redis key and the server for a cache key.
    func location(forKey key: String) -> (key: String, node: RedisNode)? {
        guard !nodes.isEmpty else { return nil }
        let digest = MD5.hex(key.utf8)
        let hash = UInt64(digest.prefix(16), radix: 16) ?? 0
        return (prefix + digest, nodes[hashing.node(for: hash)])
    }

    /// The Redis key an entry for `key` is stored under (`webimage:v1:<namespace>:<md5>`), for
    /// operators with `redis-cli`; `nil` when the tier has no servers.
    public func redisKey(forKey key: String) -> String? {
        location(forKey: key)?.key
    }

    /// The entry stored under `key`, or `nil` on a miss, an expired or corrupt entry (deleted), or
    /// any failure (counted in ``statistics``).
    public func value(forKey key: String) async -> CachedData? {
        guard let (redisKey, node) = location(forKey: key) else { return nil }
        guard let replies = await run([["GET", redisKey]], on: node) else { return nil }
        return await entry(from: replies[0], redisKey: redisKey, node: node)
    }

    /// Stores `data` (with `metadata`) under `key` for ``RedisTierConfig/timeToLive``, releasing this
    /// process's fill claim on the key if it holds one. Returns whether the value was written:
    /// `false` when it is too large (it stays local) or Redis failed.
    @discardableResult
    public func setValue(_ data: Data, metadata: DiskCacheMetadata?, forKey key: String) async -> Bool {
        guard let (redisKey, node) = location(forKey: key) else { return false }
        let release = releaseCommand(forRedisKey: redisKey)
        guard data.count + (metadata?.extendedData?.count ?? 0) <= config.maxValueBytes else {
            counters.add(\.oversizeSkipped)
            if let release { _ = await run([release], on: node) }
            return false
        }
        let expiry = Date().addingTimeInterval(Double(config.timeToLive.redisMilliseconds) / 1000)
        let value = RedisEnvelope.encode(.init(data: data, format: ImageFormat(sniffing: data), expiresAt: expiry, metadata: metadata))
        var commands: [[Data]] = [[Data("SET".utf8), Data(redisKey.utf8), value, Data("PX".utf8), Data("\(config.timeToLive.redisMilliseconds)".utf8)]]
        if let release { commands.append(release) }
        guard let replies = await run(commands, on: node), replies[0] == .status("OK") else { return false }
        counters.add(\.stores)
        return true
    }

    /// Deletes the entry under `key` (`UNLINK`); a failure is counted and ignored.
    public func removeValue(forKey key: String) async {
        guard let (redisKey, node) = location(forKey: key) else { return }
        _ = await run([["UNLINK", redisKey]], on: node)
    }

    /// Whether an entry exists under `key` (`EXISTS`; `false` on failure).
    public func containsValue(forKey key: String) async -> Bool {
        guard let (redisKey, node) = location(forKey: key), let replies = await run([["EXISTS", redisKey]], on: node) else { return false }
        return replies[0] == .integer(1)
    }

    /// Fleet-wide single flight, after every tier missed `key`: claims the key for this process and
    /// returns `nil` (fetch it, then store it: the store releases the claim, as does
    /// ``endFill(forKey:)``), or, when another process holds the claim, waits for its value to
    /// appear and returns it. Returns `nil` without a claim when Redis fails, or after
    /// ``RedisTierConfig/maxFillWait`` (the holder is slow or dead: fetch it too), or when the
    /// calling task is cancelled.
    public func beginFill(forKey key: String) async -> CachedData? {
        guard let (redisKey, node) = location(forKey: key) else { return nil }
        let claimKey = redisKey + ":fill"
        let token = tokenPrefix + "\(nextToken.add(1, ordering: .relaxed).newValue)"
        let deadline = ContinuousClock.now + config.maxFillWait
        var waited = false
        while true {
            // One atomic step: the value if it is there, else the claim if nobody holds it.
            let step = ["EVAL", Self.getOrClaimScript, "2", redisKey, claimKey, token, "\(config.fillClaimTimeToLive.redisMilliseconds)"]
            guard let replies = await run([step], on: node), case .array(let answer) = replies[0], let first = answer.first else { return nil }
            if first == .integer(1), answer.count == 2 {
                guard let found = await entry(from: answer[1], redisKey: redisKey, node: node) else { return nil }
                if waited { counters.add(\.fillsJoined) }
                return found
            }
            counters.add(\.misses)
            if first == .integer(0) {
                claims.withLock { $0[claimKey] = token }
                counters.add(\.fillsClaimed)
                return nil
            }
            guard ContinuousClock.now < deadline else {
                counters.add(\.fillWaitsTimedOut)
                return nil
            }
            waited = true
            do { try await Task.sleep(for: config.fillPollInterval) } catch { return nil }
        }
    }

    /// Releases this process's fill claim on `key` (the fetch failed or stored nothing); the others
    /// waiting fetch it themselves. Nothing when no claim is held.
    public func endFill(forKey key: String) async {
        guard let (redisKey, node) = location(forKey: key), let release = releaseCommand(forRedisKey: redisKey) else { return }
        _ = await run([release], on: node)
    }

    /// Deletes every entry of this namespace on every server (`SCAN MATCH` + `UNLINK`); returns how
    /// many keys it asked to unlink.
    @discardableResult
    public func removeAll() async -> Int {
        var removed = 0
        // The namespace is matched literally: glob characters in it are escaped.
        let pattern = prefix.reduce(into: "") { text, character in
            if "*?[]\\".contains(character) { text.append("\\") }
            text.append(character)
        } + "*"
        for node in nodes {
            var cursor = "0"
            var rounds = 0
            repeat {
                rounds += 1
                guard rounds <= 1_000_000, let replies = await run([["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"]], on: node),
                      case .array(let parts) = replies[0], parts.count == 2, case .string(let next) = parts[0],
                      case .array(let keys) = parts[1] else { break }
                cursor = String(decoding: next, as: UTF8.self)
                let names = keys.compactMap { reply -> Data? in if case .string(let name) = reply { name } else { nil } }
                if !names.isEmpty, await run([[Data("UNLINK".utf8)] + names], on: node) != nil { removed += names.count }
            } while cursor != "0"
        }
        return removed
    }

    /// Counters since the tier was created.
    public var statistics: RedisTierStatistics {
        var statistics = counters.snapshot
        statistics.breakerOpenings = nodes.reduce(0) { $0 + $1.breaker.openings }
        return statistics
    }

    /// The nodes, and how many of them have their circuit breaker open now (their commands are skipped).
    var breakerState: (nodes: Int, open: Int) {
        (nodes.count, nodes.filter { $0.breaker.isOpen }.count)
    }

    /// Stops every connection thread once its queued commands have run; later calls are misses.
    public func close() {
        nodes.forEach { $0.close() }
    }

    // MARK: Commands

    private func entry(from reply: RedisReply, redisKey: String, node: RedisNode) async -> CachedData? {
        guard case .string(let value) = reply else {
            counters.add(\.misses)
            return nil
        }
        guard let contents = RedisEnvelope.decode(value) else {
            counters.update { $0.corruptRemoved += 1; $0.misses += 1 }
            _ = await run([["UNLINK", redisKey]], on: node)
            return nil
        }
        guard contents.expiresAt > Date() else {
            counters.add(\.misses)
            return nil
        }
        counters.add(\.hits)
        return CachedData(data: contents.data, metadata: contents.metadata, source: .sharedTier(Self.tierName))
    }

    /// The command that releases this process's claim on `redisKey`, taking it from ``claims``; `nil`
    /// when none is held.
    private func releaseCommand(forRedisKey redisKey: String) -> [Data]? {
        let claimKey = redisKey + ":fill"
        return claims.withLock { $0.removeValue(forKey: claimKey) }.map { Self.releaseScript(claimKey, $0) }
    }

    /// `{1, value}` when KEYS[1] holds a value, else `{0}` after claiming KEYS[2] for ARGV[2] ms with
    /// token ARGV[1], else `{2}` (another process holds the claim).
    private static let getOrClaimScript = """
        local value = redis.call('get', KEYS[1])
        if value then return {1, value} end
        if redis.call('set', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0} end
        return {2}
        """

    /// Deletes `claimKey` only if it still holds `token` (a claim that expired and was taken by
    /// another process stays theirs).
    private static func releaseScript(_ claimKey: String, _ token: String) -> [Data] {
        ["EVAL", "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end", "1", claimKey, token]
            .map { Data($0.utf8) }
    }

    private func run(_ commands: [[String]], on node: RedisNode) async -> [RedisReply]? {
        await run(commands.map { $0.map { Data($0.utf8) } }, on: node)
    }

    /// Runs `commands` on `node`: the replies, or `nil` after counting a failure (an error reply
    /// included: the command did not do what was asked).
    private func run(_ commands: [[Data]], on node: RedisNode) async -> [RedisReply]? {
        let started = ContinuousClock.now
        do {
            let replies = try await node.run(commands)
            let failed = replies.contains { $0.errorText != nil }
            counters.update {
                $0.timeSpent += .now - started
                if failed { $0.errors += 1 }
            }
            return failed ? nil : replies
        } catch {
            counters.update {
                $0.timeSpent += .now - started
                $0.errors += 1
                if case .unavailable = error { $0.skippedWhileOpen += 1 }
            }
            return nil
        }
    }
}
