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

    enum Outcome {
        /// Not a Redis option.
        case notMine
        case parsed
        case failed(String)
    }

    /// Reads `argument` (and its value, through `value`) when it is one of these options.
    mutating func parse(_ argument: String, value: () -> String?) -> Outcome {
        switch argument {
        case "--redis":
            guard let text = value(), let endpoint = RedisEndpoint(url: text) else {
                return .failed("--redis needs redis://[:password@]host:port[/db]")
            }
            endpoints.append(endpoint)
            return .parsed
        case "--redis-namespace":
            guard let text = value(), !text.isEmpty else { return .failed("--redis-namespace needs a name") }
            namespace = text
            return .parsed
        case "--redis-timeout":
            guard let text = value(), let milliseconds = Int(text), (1...600_000).contains(milliseconds) else {
                return .failed("--redis-timeout needs a number of milliseconds from 1 to 600000")
            }
            timeout = .milliseconds(milliseconds)
            return .parsed
        case "--redis-fill-wait":
            guard let text = value(), let seconds = Int(text), (1...3600).contains(seconds) else {
                return .failed("--redis-fill-wait needs a number of seconds from 1 to 3600")
            }
            fillWait = .seconds(seconds)
            return .parsed
        default:
            return .notMine
        }
    }

    /// `local`, with the Redis tier behind it when servers were given.
    func cache(over local: ImageCache) -> any ImageCaching {
        guard !endpoints.isEmpty else { return local }
        var config = RedisTierConfig(endpoints: endpoints, namespace: namespace)
        if let timeout { (config.connectTimeout, config.commandTimeout) = (timeout, timeout) }
        if let fillWait { (config.fillClaimTimeToLive, config.maxFillWait) = (fillWait, fillWait) }
        return RedisImageCache(local: local, redis: config)
    }
}
