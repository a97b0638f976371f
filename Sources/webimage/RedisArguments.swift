import Foundation
import WebImage
import WebImageRedis

/// `--redis URL` (repeatable: one per server), `--redis-namespace NAME`, `--redis-timeout MS` and
/// `--redis-fill-wait SECONDS`, read by `fetch` and `serve`.
struct RedisArguments {
    var endpoints: [RedisEndpoint] = []
    var namespace = "default"
    /// Connect and command time-out; nil: ``RedisTierConfig``'s defaults (250 ms).
    var timeout: Duration?
    /// How long a fill claim lives and another process waits for it; nil: the default (10 s).
    var fillWait: Duration?

    /// The flags, as `fetch` and `serve` declare them (``CommandOption/lifted(_:)``).
    static let options: [CommandOption<RedisArguments>] = [
        .value("--redis", "URL", need: "redis://[:password@]host:port[/db]",
               help: "a shared cache tier on Redis behind the memory and disk tiers (repeat for several servers; keys spread by "
                   + "rendezvous hashing): processes sharing it fetch each URL once between them; a failing Redis only slows loads") {
            arguments, text in
            guard let endpoint = RedisEndpoint(url: text) else { return false }
            arguments.endpoints.append(endpoint)
            return true
        },
        .value("--redis-namespace", "NAME", need: "a name", default: "default", help: "keys are webimage:v1:NAME:<md5>") { arguments, text in
            guard !text.isEmpty else { return false }
            arguments.namespace = text
            return true
        },
        .value("--redis-timeout", "MS", need: "a number of milliseconds from 1 to 600000", default: "250",
               help: "Redis's connect and command time-out") { arguments, text in
            guard let milliseconds = Int(text), (1...600_000).contains(milliseconds) else { return false }
            arguments.timeout = .milliseconds(milliseconds)
            return true
        },
        .value("--redis-fill-wait", "S", need: "a number of seconds from 1 to 3600", default: "10",
               help: "how long a process's claim to fetch a URL for the fleet lives, and others wait for it") { arguments, text in
            guard let seconds = Int(text), (1...3600).contains(seconds) else { return false }
            arguments.fillWait = .seconds(seconds)
            return true
        },
    ]

    /// `local`, with the Redis tier behind it when servers were given.
    func cache(over local: ImageCache) -> any ImageCaching {
        guard !endpoints.isEmpty else { return local }
        var config = RedisTierConfig(endpoints: endpoints, namespace: namespace)
        if let timeout { (config.connectTimeout, config.commandTimeout) = (timeout, timeout) }
        if let fillWait { (config.fillClaimTimeToLive, config.maxFillWait) = (fillWait, fillWait) }
        return RedisImageCache(local: local, redis: config)
    }
}
