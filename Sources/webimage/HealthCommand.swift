import Foundation
import WebImage

/// `webimage health [URL]`: a container's health check. GETs the URL (default the local server's
/// `/health` under `IMGPROXY_PATH_PREFIX`, on the port `IMGPROXY_BIND` or `PORT` names, else 8080) over libcurl, within 5
/// seconds, and exits 0 when it answers 200, else 1 (2 for bad usage).
enum HealthCommand {
    /// `webimage health`'s operand (it has no flags), declared as every command's are.
    static let options = CommandOptions<String?>(
        usage: "webimage health [URL]",
        summary: """
        GET URL (default http://127.0.0.1:8080/health, or the port of $IMGPROXY_BIND or $PORT, under $IMGPROXY_PATH_PREFIX)
        and exit 0 when it answers 200 within 5 seconds, else 1: a container's health check
        """,
        options: [],
        operand: { url, text throws(ArgumentError) in
            guard url == nil else { throw ArgumentError(message: "at most one URL") }
            url = text
        })

    static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment) async -> Int32 {
        var given: String?
        do {
            try options.parse(arguments, into: &given)
        } catch {
            Console.error("webimage health: \(error.message)\n")
            return 2
        }
        let prefix = (environment["IMGPROXY_PATH_PREFIX"] ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        let text = given ?? "http://127.0.0.1:\(defaultPort(environment))\(prefix.isEmpty ? "" : "/" + prefix)/health"
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            Console.error("webimage health: not an http(s) URL: \(text)\n")
            return 2
        }
        do {
            let answer = try await CurlExchange.send("GET", url: url, headers: [:], body: nil, timeout: .seconds(5), maxBodyBytes: 1 << 20)
            guard answer.status == 200 else {
                Console.error("webimage health: \(text) answered \(answer.status)\n")
                return 1
            }
            Console.write("ok\n")
            return 0
        } catch {
            Console.error("webimage health: \(text): \(error)\n")
            return 1
        }
    }

    /// The port of `IMGPROXY_BIND` (`host:port` or `:port`), else `PORT`, else 8080.
    static func defaultPort(_ environment: [String: String]) -> Int {
        if let bind = environment["IMGPROXY_BIND"], let colon = bind.lastIndex(of: ":"), let port = Int(bind[bind.index(after: colon)...]) {
            return port
        }
        return environment["PORT"].flatMap(Int.init) ?? 8080
    }
}
