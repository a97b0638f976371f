import Foundation
import WebImage
import WebImageServer

/// imgproxy's configuration from the environment (`IMGPROXY_*`, and `PORT`), with imgproxy's names
/// and value syntax, read into a ``ServeCommand`` before its flags, which win.
///
/// A name it honours is applied; a value it cannot parse stops the start with a message naming the
/// variable; every other `IMGPROXY_*` name is reported at start-up as ignored, with why
/// (``Docs/imgproxy-config.md`` has the table). Booleans are Go's `strconv.ParseBool` (`1`, `t`,
/// `true`, `0`, `f`, `false`, any case); durations are whole seconds; sizes are bytes.
enum ImgproxyEnvironment {
    /// A value that cannot be used: the variable and why.
    struct Invalid: Error, CustomStringConvertible {
        let name: String
        let reason: String
        var description: String { "\(name): \(reason)" }
    }

    private typealias Apply = @Sendable (String, inout ServeCommand) throws(Invalid) -> Void

    /// The names applied, and how.
    private static let honoured: [String: Apply] = [
        "IMGPROXY_BIND": { value, command throws(Invalid) in
            let (host, port) = try bind(value)
            command.bind = host
            command.port = port
        },
        "IMGPROXY_KEY": { value, command throws(Invalid) in command.environmentKeyHexes = list(value) },
        "IMGPROXY_SALT": { value, command throws(Invalid) in command.environmentSaltHexes = list(value) },
        "IMGPROXY_WORKERS": { value, command throws(Invalid) in command.maxInFlight = try positive(value, "IMGPROXY_WORKERS") },
        "IMGPROXY_REQUESTS_QUEUE_SIZE": { value, command throws(Invalid) in
            command.queue = try count(value, "IMGPROXY_REQUESTS_QUEUE_SIZE")
        },
        "IMGPROXY_TTL": { value, command throws(Invalid) in command.cacheMaxAge = try count(value, "IMGPROXY_TTL") },
        "IMGPROXY_ALLOW_SECURITY_OPTIONS": { value, command throws(Invalid) in
            command.allowsSecurityOptions = try bool(value, "IMGPROXY_ALLOW_SECURITY_OPTIONS")
        },
        "IMGPROXY_LOCAL_FILESYSTEM_ROOT": { value, command throws(Invalid) in
            if !value.isEmpty { command.localRoot = URL(fileURLWithPath: value, isDirectory: true) }
        },
        "IMGPROXY_WATERMARK_PATH": { value, command throws(Invalid) in if !value.isEmpty { command.watermark = value } },
        "IMGPROXY_WATERMARK_URL": { value, command throws(Invalid) in if !value.isEmpty { command.watermark = value } },
        "IMGPROXY_PRESETS": { value, command throws(Invalid) in
            for entry in list(value) {
                do {
                    let preset = try ImageServerConfig.preset(parsing: entry)
                    command.presets[preset.name] = preset.options
                } catch {
                    throw Invalid(name: "IMGPROXY_PRESETS", reason: "\(error)")
                }
            }
        },
        "IMGPROXY_AUTO_WEBP": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_AUTO_WEBP") { command.negotiatesFormats = true }
        },
        "IMGPROXY_AUTO_AVIF": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_AUTO_AVIF") { command.negotiatesFormats = true }
        },
        "IMGPROXY_DOWNLOAD_TIMEOUT": { value, command throws(Invalid) in
            command.downloadTimeout = .seconds(try positive(value, "IMGPROXY_DOWNLOAD_TIMEOUT"))
        },
        "IMGPROXY_MAX_SRC_FILE_SIZE": { value, command throws(Invalid) in
            let bytes = try count(value, "IMGPROXY_MAX_SRC_FILE_SIZE")
            command.maxSourceBytes = bytes == 0 ? nil : bytes   // imgproxy: 0 is no limit (ours stays the default)
        },
        "IMGPROXY_MAX_REDIRECTS": { value, command throws(Invalid) in
            command.maxRedirects = try count(value, "IMGPROXY_MAX_REDIRECTS")
        },
        "IMGPROXY_USER_AGENT": { value, command throws(Invalid) in if !value.isEmpty { command.userAgent = value } },
    ]

    /// imgproxy names not honoured (yet), and why: reported at start-up.
    static let notHonoured: [String: String] = [
        "IMGPROXY_NETWORK": "only TCP is served",
        "IMGPROXY_PATH_PREFIX": "not yet: URLs are served from /",
        "IMGPROXY_SIGNATURE_SIZE": "not yet: signatures are full length (32 bytes)",
        "IMGPROXY_KEY_PATH": "not yet: give the keys in IMGPROXY_KEY",
        "IMGPROXY_SALT_PATH": "not yet: give the salts in IMGPROXY_SALT",
        "IMGPROXY_ALLOWED_SOURCES": "not yet: source URL prefixes; --allow-host takes host patterns",
        "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "not yet: see --source-policy",
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": "not yet: see --source-policy (link-local is always refused)",
        "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": "not yet: see --source-policy",
        "IMGPROXY_QUALITY": "not yet: each format's default quality is WebImage's",
        "IMGPROXY_FORMAT_QUALITY": "not yet",
        "IMGPROXY_MAX_SRC_RESOLUTION": "not yet: the manager's pixel limit (100 MP) applies",
        "IMGPROXY_MAX_ANIMATION_FRAMES": "not yet: animations keep every frame",
        "IMGPROXY_PROMETHEUS_BIND": "not yet: metrics are at /metrics on the server's own port",
        "IMGPROXY_USE_ETAG": "ETags are always sent",
        "IMGPROXY_LOG_FORMAT": "not yet",
        "IMGPROXY_LOG_LEVEL": "not yet",
    ]

    /// Applies every honoured name of `environment` to `command` (before its flags are read).
    /// - Returns: a line for each `IMGPROXY_*` name that is not honoured, to report at start-up.
    /// - Throws: ``Invalid`` for a value that cannot be parsed.
    static func apply(_ environment: [String: String], to command: inout ServeCommand) throws(Invalid) -> [String] {
        if environment["IMGPROXY_BIND"] == nil, let port = environment["PORT"] {
            guard let number = UInt16(port) else { throw Invalid(name: "PORT", reason: "not a port number: \(port)") }
            command.port = number
        }
        var ignored: [String] = []
        for name in environment.keys.sorted() where name.hasPrefix("IMGPROXY_") {
            let value = environment[name] ?? ""
            if let apply = honoured[name] {
                try apply(value, &command)
            } else {
                ignored.append("\(name) is ignored: \(notHonoured[name] ?? "not an imgproxy setting webimage serve knows")")
            }
        }
        if command.environmentKeyHexes.count != command.environmentSaltHexes.count {
            throw Invalid(name: "IMGPROXY_KEY", reason: "\(command.environmentKeyHexes.count) keys but \(command.environmentSaltHexes.count) salts in IMGPROXY_SALT")
        }
        return ignored
    }

    /// The names honoured (for the help text and the docs' test).
    static var honouredNames: [String] { honoured.keys.sorted() }

    // MARK: Values, as imgproxy parses them

    /// `host:port`, `:port` (every interface) or `[v6]:port`.
    static func bind(_ value: String) throws(Invalid) -> (String, UInt16) {
        guard let colon = value.lastIndex(of: ":"), let port = UInt16(value[value.index(after: colon)...]) else {
            throw Invalid(name: "IMGPROXY_BIND", reason: "not host:port or :port: \(value)")
        }
        var host = String(value[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        guard IPAddress(host) != nil else { throw Invalid(name: "IMGPROXY_BIND", reason: "not an IP address: \(host)") }
        return (host, port)
    }

    static func bool(_ value: String, _ name: String) throws(Invalid) -> Bool {
        switch value {
        case "1", "t", "T", "TRUE", "true", "True": return true
        case "0", "f", "F", "FALSE", "false", "False": return false
        default: throw Invalid(name: name, reason: "not a boolean: \(value)")
        }
    }

    static func count(_ value: String, _ name: String) throws(Invalid) -> Int {
        guard let number = Int(value.trimmingCharacters(in: .whitespaces)), number >= 0 else {
            throw Invalid(name: name, reason: "not a whole number: \(value)")
        }
        return number
    }

    static func positive(_ value: String, _ name: String) throws(Invalid) -> Int {
        let number = try count(value, name)
        guard number > 0 else { throw Invalid(name: name, reason: "must be above 0: \(value)") }
        return number
    }

    /// A comma-separated list, entries trimmed, empty ones dropped.
    static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
