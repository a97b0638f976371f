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

    /// The names applied, and how: these and ``qualitySettings``.
    private static let honoured = generalSettings.merging(qualitySettings) { first, _ in first }

    private static let generalSettings: [String: Apply] = [
        "IMGPROXY_BIND": { value, command throws(Invalid) in
            let (host, port) = try bind(value, "IMGPROXY_BIND")
            command.bind = host
            command.port = port
            command.bindIsExplicit = true
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
            for entry in list(value, separator: command.presetsSeparator) {
                do {
                    let preset = try ImageServerConfig.preset(parsing: entry)
                    command.presets[preset.name] = preset.options
                } catch {
                    throw Invalid(name: "IMGPROXY_PRESETS", reason: "\(error)")
                }
            }
        },
        "IMGPROXY_ALWAYS_RASTERIZE_SVG": { value, command throws(Invalid) in
            command.server.alwaysRasterizesSVG = try bool(value, "IMGPROXY_ALWAYS_RASTERIZE_SVG")
        },
        "IMGPROXY_SANITIZE_SVG": { value, command throws(Invalid) in command.sanitizesSVG = try bool(value, "IMGPROXY_SANITIZE_SVG") },
        "IMGPROXY_AUTO_WEBP": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_AUTO_WEBP") { command.server.autoFormats.insert(.webp) }
        },
        "IMGPROXY_AUTO_AVIF": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_AUTO_AVIF") { command.server.autoFormats.insert(.avif) }
        },
        "IMGPROXY_ENFORCE_WEBP": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_ENFORCE_WEBP") { command.server.enforcedFormats.insert(.webp) }
        },
        "IMGPROXY_ENFORCE_AVIF": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_ENFORCE_AVIF") { command.server.enforcedFormats.insert(.avif) }
        },
        "IMGPROXY_AUTO_JXL": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_AUTO_JXL") { command.server.autoFormats.insert(.jxl) }
        },
        "IMGPROXY_ENFORCE_JXL": { value, command throws(Invalid) in
            if try bool(value, "IMGPROXY_ENFORCE_JXL") { command.server.enforcedFormats.insert(.jxl) }
        },
        "IMGPROXY_PREFERRED_FORMATS": { value, command throws(Invalid) in
            var formats: [ImageFormat] = []
            for name in list(value) {
                guard ProcessingDefaults.sourceFormats(named: name.lowercased()) != nil else {
                    throw Invalid(name: "IMGPROXY_PREFERRED_FORMATS", reason: "unknown format \(name)")
                }
                // As imgproxy: a format that cannot be written is left out (heic, bmp, tiff, ico, jxl, svg here).
                if let format = ProcessingDefaults.outputFormat(named: name.lowercased()) { formats.append(format) }
            }
            guard !formats.isEmpty else { throw Invalid(name: "IMGPROXY_PREFERRED_FORMATS", reason: "no format WebImage can write: \(value)") }
            command.server.preferredFormats = formats
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
        "IMGPROXY_PATH_PREFIX": { value, command throws(Invalid) in
            guard value.isEmpty || value.hasPrefix("/") else { throw Invalid(name: "IMGPROXY_PATH_PREFIX", reason: "must start with /: \(value)") }
            command.server.pathPrefix = value.hasSuffix("/") ? String(value.dropLast()) : value
        },
        "IMGPROXY_SIGNATURE_SIZE": { value, command throws(Invalid) in
            let size = try positive(value, "IMGPROXY_SIGNATURE_SIZE")
            guard size <= 32 else { throw Invalid(name: "IMGPROXY_SIGNATURE_SIZE", reason: "invalid size (1 to 32 bytes): \(value)") }
            command.server.signatureSize = size
        },
        "IMGPROXY_KEY_PATH": { value, command throws(Invalid) in
            if !value.isEmpty { command.environmentKeyHexes = try lines(ofFile: value, "IMGPROXY_KEY_PATH") }
        },
        "IMGPROXY_SALT_PATH": { value, command throws(Invalid) in
            if !value.isEmpty { command.environmentSaltHexes = try lines(ofFile: value, "IMGPROXY_SALT_PATH") }
        },
        "IMGPROXY_ALLOWED_SOURCES": { value, command throws(Invalid) in command.server.allowedSources = list(value) },
        "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": { value, command throws(Invalid) in
            command.sourcePolicy.allowsLoopback = try bool(value, "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES")
        },
        "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES": { value, command throws(Invalid) in
            command.sourcePolicy.allowsLinkLocal = try bool(value, "IMGPROXY_ALLOW_LINK_LOCAL_SOURCE_ADDRESSES")
        },
        "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": { value, command throws(Invalid) in
            command.sourcePolicy.allowsPrivate = try bool(value, "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES")
        },
        "IMGPROXY_QUALITY": { value, command throws(Invalid) in
            command.server.processingDefaults.quality = try quality(value, "IMGPROXY_QUALITY")
        },
        "IMGPROXY_FORMAT_QUALITY": { value, command throws(Invalid) in
            command.server.processingDefaults.formatQualities.merge(try formatQualities(value, "IMGPROXY_FORMAT_QUALITY")) { $1 }
        },
        "IMGPROXY_MAX_SRC_RESOLUTION": { value, command throws(Invalid) in
            command.server.processingDefaults.maxSourcePixels = try megapixels(value, "IMGPROXY_MAX_SRC_RESOLUTION")
        },
        "IMGPROXY_MAX_ANIMATION_FRAMES": { value, command throws(Invalid) in
            command.server.processingDefaults.maxAnimationFrames = try positive(value, "IMGPROXY_MAX_ANIMATION_FRAMES")
        },
        "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": { value, command throws(Invalid) in
            command.server.processingDefaults.maxAnimationFramePixels = try megapixelLimit(value, "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION")
        },
        "IMGPROXY_MAX_RESULT_DIMENSION": { value, command throws(Invalid) in
            command.server.processingDefaults.maxResultDimension = try count(value, "IMGPROXY_MAX_RESULT_DIMENSION")
        },
        "IMGPROXY_STRIP_COLOR_PROFILE": { value, command throws(Invalid) in
            command.server.processingDefaults.stripsColorProfile = try bool(value, "IMGPROXY_STRIP_COLOR_PROFILE")
        },
        "IMGPROXY_KEEP_COPYRIGHT": { value, command throws(Invalid) in
            command.server.processingDefaults.keepsCopyright = try bool(value, "IMGPROXY_KEEP_COPYRIGHT")
        },
        "IMGPROXY_PRESERVE_HDR": { value, command throws(Invalid) in
            command.server.processingDefaults.preservesHDR = try bool(value, "IMGPROXY_PRESERVE_HDR")
        },
        "IMGPROXY_AUTO_ROTATE": { value, command throws(Invalid) in
            command.server.processingDefaults.autoRotate = try bool(value, "IMGPROXY_AUTO_ROTATE")
        },
        "IMGPROXY_HEALTH_CHECK_PATH": { value, command throws(Invalid) in
            guard value.isEmpty || value.hasPrefix("/") else { throw Invalid(name: "IMGPROXY_HEALTH_CHECK_PATH", reason: "must start with /: \(value)") }
            command.server.healthCheckPath = value.isEmpty ? nil : value
        },
        "IMGPROXY_PRESETS_SEPARATOR": { value, command throws(Invalid) in
            guard !value.isEmpty else { throw Invalid(name: "IMGPROXY_PRESETS_SEPARATOR", reason: "empty") }   // read before IMGPROXY_PRESETS
        },
        "IMGPROXY_BASE_URL": { value, command throws(Invalid) in command.server.urlParsing.baseURL = value },
        "IMGPROXY_URL_REPLACEMENTS": { value, command throws(Invalid) in
            command.server.urlParsing.replacements = try value.split(separator: ";").map { pair throws(Invalid) in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2 else { throw Invalid(name: "IMGPROXY_URL_REPLACEMENTS", reason: "invalid key/value: \(pair)") }
                return URLParsing.Replacement(pattern: WildcardPattern(String(parts[0])), replacement: String(parts[1]))
            }
        },
        "IMGPROXY_ARGUMENTS_SEPARATOR": { value, command throws(Invalid) in
            guard value.count == 1, let separator = value.first, separator != "/" else {
                throw Invalid(name: "IMGPROXY_ARGUMENTS_SEPARATOR", reason: "one character other than / is needed: \(value)")
            }
            command.server.urlParsing.argumentsSeparator = separator
        },
        "IMGPROXY_BASE64_URL_INCLUDES_FILENAME": { value, command throws(Invalid) in
            command.server.urlParsing.base64IncludesFilename = try bool(value, "IMGPROXY_BASE64_URL_INCLUDES_FILENAME")
        },
        "IMGPROXY_ONLY_PRESETS": { value, command throws(Invalid) in
            command.server.urlParsing.onlyPresets = try bool(value, "IMGPROXY_ONLY_PRESETS")
        },
        "IMGPROXY_ALLOWED_PROCESSING_OPTIONS": { value, command throws(Invalid) in
            command.server.urlParsing.allowedProcessingOptions = Set(list(value))
        },
        "IMGPROXY_USE_S3": { value, command throws(Invalid) in command.server.readsS3Sources = try bool(value, "IMGPROXY_USE_S3") },
        "IMGPROXY_S3_ENDPOINT": { value, command throws(Invalid) in
            guard !value.isEmpty else { return }
            guard let url = URL(string: value.contains("://") ? value : "https://" + value), url.host != nil else {
                throw Invalid(name: "IMGPROXY_S3_ENDPOINT", reason: "not a URL: \(value)")
            }
            command.s3.endpoint = url
        },
        "IMGPROXY_S3_REGION": { value, command throws(Invalid) in if !value.isEmpty { command.s3.region = value } },
        "IMGPROXY_PROMETHEUS_BIND": { value, command throws(Invalid) in
            guard !value.isEmpty else { return }
            let (host, port) = try bind(value, "IMGPROXY_PROMETHEUS_BIND")
            command.server.prometheusListener = (host, port)
        },
        "IMGPROXY_PROMETHEUS_NAMESPACE": { value, command throws(Invalid) in command.server.prometheusNamespace = value },
        "IMGPROXY_FALLBACK_IMAGE_DATA": { value, command throws(Invalid) in
            guard !value.isEmpty else { return }
            guard let data = Data(base64Encoded: value) else { throw Invalid(name: "IMGPROXY_FALLBACK_IMAGE_DATA", reason: "not base64") }
            command.fallbackData = data
        },
        "IMGPROXY_FALLBACK_IMAGE_PATH": { value, command throws(Invalid) in
            if !value.isEmpty { command.fallbackLocation = URL(fileURLWithPath: value) }
        },
        "IMGPROXY_FALLBACK_IMAGE_URL": { value, command throws(Invalid) in
            guard !value.isEmpty else { return }
            guard let url = URL(string: value), ["http", "https"].contains(url.scheme?.lowercased() ?? "") else {
                throw Invalid(name: "IMGPROXY_FALLBACK_IMAGE_URL", reason: "not an http(s) URL: \(value)")
            }
            command.fallbackLocation = url
        },
        "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": { value, command throws(Invalid) in
            let code = try count(value, "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE")
            guard code == 0 || (100...599).contains(code) else {
                throw Invalid(name: "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE", reason: "invalid: \(value)")
            }
            command.fallbackStatus = code == 0 ? nil : code
        },
        "IMGPROXY_FALLBACK_IMAGE_TTL": { value, command throws(Invalid) in
            let seconds = try count(value, "IMGPROXY_FALLBACK_IMAGE_TTL")
            command.fallbackMaxAge = seconds == 0 ? nil : seconds
        },
        "IMGPROXY_WATERMARK_OPACITY": { value, command throws(Invalid) in
            guard let opacity = Double(value), (0...1).contains(opacity) else {
                throw Invalid(name: "IMGPROXY_WATERMARK_OPACITY", reason: "an opacity is 0 to 1: \(value)")
            }
            command.server.processingDefaults.watermarkOpacity = opacity
        },
        "IMGPROXY_MAX_CLIENTS": { value, command throws(Invalid) in
            let clients = try count(value, "IMGPROXY_MAX_CLIENTS")
            command.server.maxClients = clients == 0 ? 65_536 : clients   // imgproxy: 0 is no limit
        },
        "IMGPROXY_SO_REUSEPORT": { value, command throws(Invalid) in command.server.reusesPort = try bool(value, "IMGPROXY_SO_REUSEPORT") },
        "IMGPROXY_TIMEOUT": { value, command throws(Invalid) in
            command.server.requestTimeout = .seconds(try positive(value, "IMGPROXY_TIMEOUT"))
        },
        "IMGPROXY_ENABLE_CLIENT_HINTS": { value, command throws(Invalid) in
            command.server.readsClientHints = try bool(value, "IMGPROXY_ENABLE_CLIENT_HINTS")
        },
        "IMGPROXY_DISABLE_SHRINK_ON_LOAD": { value, command throws(Invalid) in
            command.server.processingDefaults.disablesShrinkOnLoad = try bool(value, "IMGPROXY_DISABLE_SHRINK_ON_LOAD")
        },
        "IMGPROXY_SECRET": { value, command throws(Invalid) in command.server.secret = value.isEmpty ? nil : value },
        "IMGPROXY_ALLOW_ORIGIN": { value, command throws(Invalid) in command.server.allowOrigin = value.isEmpty ? nil : value },
        "IMGPROXY_TRUSTED_SIGNATURES": { value, command throws(Invalid) in command.server.trustedSignatures = Set(list(value)) },
        "IMGPROXY_KEEP_ALIVE_TIMEOUT": { value, command throws(Invalid) in
            command.server.idleTimeoutSeconds = try positive(value, "IMGPROXY_KEEP_ALIVE_TIMEOUT")
        },
        "IMGPROXY_GRACEFUL_STOP_TIMEOUT": { value, command throws(Invalid) in
            command.server.drainTimeout = .seconds(try count(value, "IMGPROXY_GRACEFUL_STOP_TIMEOUT"))
        },
        "IMGPROXY_AVIF_SPEED": { value, command throws(Invalid) in
            let speed = try count(value, "IMGPROXY_AVIF_SPEED")
            guard speed <= 9 else { throw Invalid(name: "IMGPROXY_AVIF_SPEED", reason: "a speed is 0 to 9: \(value)") }
            command.server.processingDefaults.avifSpeed = speed
        },
        "IMGPROXY_WEBP_EFFORT": { value, command throws(Invalid) in
            let effort = try positive(value, "IMGPROXY_WEBP_EFFORT")
            guard effort <= 6 else { throw Invalid(name: "IMGPROXY_WEBP_EFFORT", reason: "an effort is 1 to 6: \(value)") }
            command.server.processingDefaults.webpEffort = effort
        },
        "IMGPROXY_JXL_EFFORT": { value, command throws(Invalid) in
            let effort = try positive(value, "IMGPROXY_JXL_EFFORT")
            guard effort <= 9 else { throw Invalid(name: "IMGPROXY_JXL_EFFORT", reason: "an effort is 1 to 9: \(value)") }
            command.server.processingDefaults.jxlEffort = effort
        },
        "IMGPROXY_JPEG_PROGRESSIVE": { value, command throws(Invalid) in
            command.server.processingDefaults.jpegProgressive = try bool(value, "IMGPROXY_JPEG_PROGRESSIVE")
        },
        "IMGPROXY_SKIP_PROCESSING_FORMATS": { value, command throws(Invalid) in
            for name in list(value) {
                guard let formats = ProcessingDefaults.sourceFormats(named: name.lowercased()) else {
                    throw Invalid(name: "IMGPROXY_SKIP_PROCESSING_FORMATS", reason: "unknown format \(name)")
                }
                command.server.processingDefaults.skipProcessingFormats.formUnion(formats)
            }
        },
        "IMGPROXY_WATERMARK_DATA": { value, command throws(Invalid) in
            guard !value.isEmpty else { return }
            guard let data = Data(base64Encoded: value) else { throw Invalid(name: "IMGPROXY_WATERMARK_DATA", reason: "not base64") }
            command.watermarkData = data
        },
        "IMGPROXY_PRESETS_PATH": { value, command throws(Invalid) in
            guard !value.isEmpty else { return }
            for entry in try lines(ofFile: value, "IMGPROXY_PRESETS_PATH") where !entry.hasPrefix("#") {
                do {
                    let preset = try ImageServerConfig.preset(parsing: entry)
                    command.presets[preset.name] = preset.options
                } catch {
                    throw Invalid(name: "IMGPROXY_PRESETS_PATH", reason: "\(error)")
                }
            }
        },
    ]

    /// Applies every honoured name of `environment` to `command` (before its flags are read).
    /// - Returns: a line for each `IMGPROXY_*` name that is not honoured, to report at start-up.
    /// - Throws: ``Invalid`` for a value that cannot be parsed.
    static func apply(_ environment: [String: String], to command: inout ServeCommand) throws(Invalid) -> [String] {
        if environment["IMGPROXY_BIND"] == nil, let port = environment["PORT"] {
            guard let number = UInt16(port) else { throw Invalid(name: "PORT", reason: "not a port number: \(port)") }
            command.port = number
        }
        if let separator = environment["IMGPROXY_PRESETS_SEPARATOR"], !separator.isEmpty { command.presetsSeparator = separator }
        var ignored: [String] = []
        for name in environment.keys.sorted() where name.hasPrefix("IMGPROXY_") {
            let value = environment[name] ?? ""
            if let apply = honoured[name] {
                try apply(value, &command)
            } else {
                ignored.append("\(name) is ignored: \(notHonoured[name] ?? "not an imgproxy setting webimage serve knows")")
            }
        }
        try checkQualitySettings(command)
        if command.environmentKeyHexes.count != command.environmentSaltHexes.count {
            throw Invalid(name: "IMGPROXY_KEY", reason: "\(command.environmentKeyHexes.count) keys but \(command.environmentSaltHexes.count) salts in IMGPROXY_SALT")
        }
        return ignored
    }

    /// The names honoured (for the help text and the docs' test).
    static var honouredNames: [String] { honoured.keys.sorted() }

    // MARK: Values, as imgproxy parses them

    /// `host:port`, `:port` (every interface) or `[v6]:port`.
    static func bind(_ value: String, _ name: String) throws(Invalid) -> (String, UInt16) {
        guard let colon = value.lastIndex(of: ":"), let port = UInt16(value[value.index(after: colon)...]) else {
            throw Invalid(name: name, reason: "not host:port or :port: \(value)")
        }
        var host = String(value[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "0.0.0.0" }
        guard IPAddress(host) != nil else { throw Invalid(name: name, reason: "not an IP address: \(host)") }
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

    /// A quality, 1–100.
    static func quality(_ value: String, _ name: String) throws(Invalid) -> Int {
        let number = try positive(value, name)
        guard number <= 100 else { throw Invalid(name: name, reason: "a quality is 1 to 100: \(value)") }
        return number
    }

    /// A list of `format=quality` entries (`IMGPROXY_FORMAT_QUALITY`'s syntax, as imgproxy's
    /// `parseImageTypesQuality`): comma-separated, names the registry knows, qualities 1–100.
    static func formatQualities(_ value: String, _ name: String) throws(Invalid) -> [ImageFormat: Int] {
        var qualities: [ImageFormat: Int] = [:]
        for entry in list(value) {
            let parts = entry.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let format = ImageFormat(named: parts[0]) else {
                throw Invalid(name: name, reason: "not format=quality: \(entry)")
            }
            qualities[format] = try quality(parts[1], name)
        }
        return qualities
    }

    /// imgproxy's megapixels (`env.MegaInt`: a decimal number of millions), as pixels.
    static func megapixels(_ value: String, _ name: String, allowsZero: Bool = false) throws(Invalid) -> Int {
        guard let number = Double(value.trimmingCharacters(in: .whitespaces)), number.isFinite, number >= 0, number < 1_000_000,
              allowsZero || number > 0 else {
            throw Invalid(name: name, reason: "not a number of megapixels\(allowsZero ? "" : " above 0"): \(value)")
        }
        return Int((number * 1_000_000).rounded())
    }

    /// A limit in imgproxy's megapixels, as pixels; `nil` for 0 (no limit).
    static func megapixelLimit(_ value: String, _ name: String) throws(Invalid) -> Int? {
        let pixels = try megapixels(value, name, allowsZero: true)
        return pixels == 0 ? nil : pixels
    }

    /// The non-empty trimmed lines of the file at `path` (imgproxy's `*_PATH` settings).
    static func lines(ofFile path: String, _ name: String) throws(Invalid) -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw Invalid(name: name, reason: "cannot read \(path)")
        }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// A list separated by `separator` (default a comma), entries trimmed, empty ones dropped.
    static func list(_ value: String, separator: String = ",") -> [String] {
        value.components(separatedBy: separator).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
