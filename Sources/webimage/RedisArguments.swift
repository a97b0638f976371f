import Foundation
import WebImage
import WebImageRedis

/// `--redis URL` (repeatable: one per server) and `--redis-namespace NAME`, read by `fetch` and `serve`.
struct RedisArguments {
    var endpoints: [RedisEndpoint] = []
    var namespace = "default"

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
        default:
            return .notMine
        }
    }

    /// `local`, with the Redis tier behind it when servers were given.
    func cache(over local: ImageCache) -> any ImageCaching {
        guard !endpoints.isEmpty else { return local }
        return RedisImageCache(local: local, redis: RedisTierConfig(endpoints: endpoints, namespace: namespace))
    }
}
