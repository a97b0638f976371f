import Foundation

/// How a ``RedisTier`` reaches its servers and what it keeps there.
public struct RedisTierConfig: Sendable {
    /// The Redis servers; keys are spread over them by rendezvous hashing. No default.
    public var endpoints: [RedisEndpoint]
    /// Separates deployments sharing a Redis: keys are `webimage:v1:<namespace>:<md5>`; default `"default"`.
    public var namespace: String
    /// How long an entry lives in Redis (`SET … PX`); default 7 days.
    public var timeToLive: Duration
    /// Entries with more bytes than this stay in the local tiers only; default 4 MiB (at most 512 MiB,
    /// Redis's own limit for a value).
    public var maxValueBytes: Int
    /// How long connecting (and logging in) may take; default 250 ms.
    public var connectTimeout: Duration
    /// How long a command may wait for its reply, and for a free connection; default 250 ms.
    public var commandTimeout: Duration
    /// Connections (each on a thread of its own) per server; default 4.
    public var connectionsPerNode: Int
    /// Commands that may wait for a free connection per server; more fail at once; default 256.
    public var maxQueuedCommands: Int
    /// Failures in a row that open a server's circuit breaker; default 3.
    public var failureThreshold: Int
    /// How long an open breaker skips its server before one probe; default 2 s.
    public var breakerCooldown: Duration
    /// How long a fill claim (`SET … NX PX`) lives: the longest a crashed holder delays the others;
    /// default 10 s.
    public var fillClaimTimeToLive: Duration
    /// The longest a load waits for another process's fill before fetching itself; default 10 s.
    public var maxFillWait: Duration
    /// How often a waiting load looks for the other process's result; default 20 ms.
    public var fillPollInterval: Duration

    /// Creates a configuration; every parameter but `endpoints` defaults to the property's documented default.
    public init(endpoints: [RedisEndpoint], namespace: String = "default", timeToLive: Duration = .seconds(7 * 24 * 3600),
                maxValueBytes: Int = 4 << 20, connectTimeout: Duration = .milliseconds(250), commandTimeout: Duration = .milliseconds(250),
                connectionsPerNode: Int = 4, maxQueuedCommands: Int = 256, failureThreshold: Int = 3, breakerCooldown: Duration = .seconds(2),
                fillClaimTimeToLive: Duration = .seconds(10), maxFillWait: Duration = .seconds(10), fillPollInterval: Duration = .milliseconds(20)) {
        self.endpoints = endpoints
        self.namespace = namespace
        self.timeToLive = timeToLive
        self.maxValueBytes = min(max(maxValueBytes, 0), 512 << 20)
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.connectionsPerNode = connectionsPerNode
        self.maxQueuedCommands = maxQueuedCommands
        self.failureThreshold = failureThreshold
        self.breakerCooldown = breakerCooldown
        self.fillClaimTimeToLive = fillClaimTimeToLive
        self.maxFillWait = maxFillWait
        self.fillPollInterval = fillPollInterval
    }
}

extension Duration {
    /// Whole milliseconds, from 1 to about 290 million years (Redis's `PX`; never traps).
    var redisMilliseconds: Int {
        let seconds = min(max(components.seconds, 0), Int64.max / 1000 - 1)
        return max(1, Int(seconds * 1000 + max(components.attoseconds, 0) / 1_000_000_000_000_000))
    }
}
