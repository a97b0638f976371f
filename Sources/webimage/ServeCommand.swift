import Foundation
import WebImage
import WebImageServer
import WebImageSVG

/// `webimage serve`: the image server (``ImageServer``) on a manager with a disk cache, until
/// Ctrl-C or SIGTERM; then it stops accepting, drains, flushes the cache and exits 0.
struct ServeCommand {
    /// imgproxy's defaults: every interface, port 8080 (`IMGPROXY_BIND`, `PORT`, `--bind`, `--port`).
    var bind = "0.0.0.0"
    var port: UInt16 = 8080
    /// Whether `--bind` or `IMGPROXY_BIND` named the address (`--demo` otherwise listens on loopback only).
    var bindIsExplicit = false
    var cacheDirectory: URL?
    var keyHex: String?
    var saltHex: String?
    var unsigned = false
    var demo = false
    var maxInFlight: Int?
    var queue: Int?
    var allowedHosts: [String] = []
    /// imgproxy's default: loopback and link-local sources refused, private networks allowed
    /// (`IMGPROXY_ALLOW_*_SOURCE_ADDRESSES`, `--source-policy`).
    var sourcePolicy = SourceAddressPolicy.imgproxy
    var redis = RedisArguments()
    var s3 = S3Arguments()
    /// The memory tier of decoded pixels, in bytes; default 0: none. A server reuses encoded variants
    /// (their own tier below), rarely the decoded pixels of a source, and a decoded tier filled to the
    /// library's default for apps (20 % of RAM, at most 512 MiB) was most of a cold server's memory.
    var memoryLimit = 0
    /// The memory tier of encoded variants, in bytes; default 64 MiB.
    var variantMemoryLimit = 64 << 20
    /// `--malloc-arenas N`: glibc arenas (`mallopt(M_ARENA_MAX)`); default `nil`:
    /// ``MallocTuning/defaultArenas(realtimeNetworkThreads:)``.
    var mallocArenas: Int?
    /// `--malloc-trim-interval MS`: how often freed allocator memory is given back (0: never).
    var mallocTrimInterval = MallocTuning.defaultTrimInterval
    /// `--preset NAME=OPTIONS` and the lines of `--presets-file`, in order (a later one wins).
    var presets: [String: [String]] = [:]
    var allowsSecurityOptions = false
    /// `--watermark PATH|URL`: the picture of the `watermark` option.
    var watermark: String?
    /// `--local-root DIR`: the folder of `local:///` sources.
    var localRoot: URL?
    /// `--keep-sources`: sources' bytes stay in the disk tier (``ImageServerConfig/keepsSources``).
    var keepsSources = false
    /// `--realtime-http`: ``ImageServerConfig/runsNetworkThreadsInRealTime``.
    var runsNetworkThreadsInRealTime = false
    /// `--disk-limit MIB`: the disk tier's size; default 1 GiB (a server's disk is bounded, and with
    /// it the disk tier's in-memory index); 0: no limit.
    var diskLimit = 1 << 30
    /// `IMGPROXY_KEY` and `IMGPROXY_SALT`: comma-separated pairs, any of which signs (keys rotate).
    /// `--key`/`--salt` or `--unsigned` win over them.
    var environmentKeyHexes: [String] = []
    var environmentSaltHexes: [String] = []
    /// `IMGPROXY_TTL`: `Cache-Control: max-age` of images; default `nil`: the server's.
    var cacheMaxAge: Int?
    /// `IMGPROXY_DOWNLOAD_TIMEOUT`, `IMGPROXY_MAX_SRC_FILE_SIZE`, `IMGPROXY_MAX_REDIRECTS`,
    /// `IMGPROXY_USER_AGENT`: the downloader's; `nil`: its defaults.
    var downloadTimeout: Duration?
    var maxSourceBytes: Int?
    var maxRedirects: Int?
    var userAgent: String?
    /// The server settings only the environment gives (`IMGPROXY_PATH_PREFIX`, `_SIGNATURE_SIZE`,
    /// `_ALLOWED_SOURCES`, `_SECRET`, `_ALLOW_ORIGIN`, …), set straight on the configuration the
    /// server starts with; its processing defaults are imgproxy's (50 megapixels of source, one
    /// animation frame) before the `IMGPROXY_*` processing and security settings. The flags' own
    /// settings are copied over it by ``serve()``.
    var server: ImageServerConfig = {
        var config = ImageServerConfig(signing: .unsigned, idleTimeoutSeconds: 10, drainTimeout: .seconds(20))
        config.readsS3Sources = false
        config.requestTimeout = .seconds(10)
        config.processingDefaults = ProcessingDefaults(maxSourcePixels: 50_000_000, maxAnimationFrames: 1)
        return config
    }()
    /// `IMGPROXY_PRESETS_SEPARATOR`: what separates the presets of `IMGPROXY_PRESETS`; default a comma.
    var presetsSeparator = ","
    /// `IMGPROXY_FALLBACK_IMAGE_PATH`/`_URL` (where the picture is), `_DATA` (its bytes, written to a
    /// temporary file at start), `_HTTP_CODE` (default 200; `nil`: the failure's) and `_TTL`.
    var fallbackLocation: URL?
    var fallbackData: Data?
    var fallbackStatus: Int? = 200
    var fallbackMaxAge: Int?
    /// `IMGPROXY_WATERMARK_DATA`: the watermark picture's bytes (`--watermark` wins).
    var watermarkData: Data?
    /// `IMGPROXY_SANITIZE_SVG`: whether an SVG passed through is sanitised; default `true`.
    var sanitizesSVG = true
    /// The `IMGPROXY_*` names not honoured, reported at start-up.
    var ignoredEnvironment: [String] = []

    /// The signing pairs from the environment, unless a flag decided.
    var environmentKeys: [ImageServerConfig.SigningKey] {
        guard keyHex == nil, !unsigned else { return [] }
        return zip(environmentKeyHexes, environmentSaltHexes).map { ImageServerConfig.SigningKey(keyHex: $0, saltHex: $1) }
    }

    static func run(_ arguments: [String]) async -> Int32 {
        if arguments.contains("--help") || arguments.contains("-h") {
            Console.write(options.help)
            return 0
        }
        let command: ServeCommand
        switch parse(arguments, environment: ProcessInfo.processInfo.environment) {
        case .success(let parsed): command = parsed
        case .failure(let message):
            Console.error("webimage serve: \(message)\n")
            return 2
        }
        return await command.serve()
    }

    /// The command `arguments` give, over imgproxy's configuration in `environment`
    /// (``ImgproxyEnvironment``: the flags win); default no environment.
    static func parse(_ arguments: [String], environment: [String: String] = [:]) -> ParseResult<ServeCommand> {
        var command = ServeCommand()
        do {
            command.ignoredEnvironment = try ImgproxyEnvironment.apply(environment, to: &command)
        } catch {
            return .failure("\(error)")
        }
        do {
            try options.parse(arguments, into: &command)
        } catch {
            return .failure(error.message)
        }
        if command.keyHex != nil && command.unsigned { return .failure("--key and --unsigned exclude each other") }
        if (command.keyHex == nil) != (command.saltHex == nil) { return .failure("--key and --salt go together") }
        do {
            try command.s3.validate()
        } catch {
            return .failure("\(error)")
        }
        if command.demo && command.sourcePolicy == .publicOnly {
            return .failure("--demo fetches its samples from this server over loopback, which --source-policy public-only refuses")
        }
        if command.demo {
            command.sourcePolicy.allowsLoopback = true   // its samples come from this server
            // Loopback sources allowed and unsigned: not for the network unless an address is named.
            if !command.bindIsExplicit { command.bind = "127.0.0.1" }
        }
        return .success(command)
    }

    /// The watermark picture from a file or an http(s) URL (loaded through the manager, so cached).
    private static func loadWatermark(_ location: String, manager: WebImageManager) async throws -> WatermarkImage {
        if let url = URL(string: location), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" {
            return try WatermarkImage(image: try await manager.loadImage(url: url).image)
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: location))
        return try WatermarkImage(image: try CoderRegistry.shared.decode(data))
    }

    /// Writes the fallback picture's bytes to a file of this process's own in the temporary folder
    /// (the manager reads and caches it from there like any file).
    /// - Throws: the file's write error.
    private static func writeFallback(_ data: Data) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-fallback-\(getpid())")
        try data.write(to: url, options: .atomic)
        return url
    }

    static func addPreset(_ text: String, to presets: inout [String: [String]]) -> ParseResult<Void> {
        do {
            let preset = try ImageServerConfig.preset(parsing: text)
            presets[preset.name] = preset.options
            return .success(())
        } catch {
            return .failure("\(error)")
        }
    }

    func serve() async -> Int32 {
        if let arenas = mallocArenas ?? MallocTuning.defaultArenas(realtimeNetworkThreads: runsNetworkThreadsInRealTime) {
            MallocTuning.limitArenas(to: arenas, environment: ProcessInfo.processInfo.environment)
        }
        if MallocTuning.startTrimming(every: mallocTrimInterval) {
            MallocTuning.keepFreedMemoryForTrimming(environment: ProcessInfo.processInfo.environment)
        }
        var cacheConfig = ImageCacheConfig()
        cacheConfig.maxMemoryCost = max(memoryLimit, 1)
        cacheConfig.shouldCacheImagesInMemory = memoryLimit > 0
        cacheConfig.maxDiskSize = diskLimit
        let inner = redis.cache(over: cacheDirectory.map { ImageCache(directory: $0, config: cacheConfig) }
                                ?? ImageCache(namespace: "default", config: cacheConfig))
        let cache = (try? s3.cache(over: inner)) ?? inner   // checked by parse
        var downloaderConfig = DownloaderConfig(sourceAddressPolicy: sourcePolicy)
        if let downloadTimeout { downloaderConfig.downloadTimeout = downloadTimeout }
        if let maxSourceBytes { downloaderConfig.maxResponseBytes = maxSourceBytes }
        if let maxRedirects { downloaderConfig.maxRedirects = maxRedirects }
        if let userAgent { downloaderConfig.httpHeaders["User-Agent"] = userAgent }
        let downloader = Downloader(config: downloaderConfig)
        let fallbackURL: URL?
        do {
            fallbackURL = try fallbackData.map(Self.writeFallback) ?? fallbackLocation
        } catch {
            Console.error("webimage serve: IMGPROXY_FALLBACK_IMAGE_DATA: \(error)\n")
            return 1
        }
        defer { if fallbackData != nil, let fallbackURL { try? FileManager.default.removeItem(at: fallbackURL) } }   // ours, written above
        let readsFiles = localRoot != nil || fallbackURL?.isFileURL == true
        let loaders: [any ImageLoader] = readsFiles ? [downloader, FileLoader()] : [downloader]
        let manager = WebImageManager(cache: cache, loader: (try? s3.loaders(loaders)) ?? LoadersManager(loaders: loaders),
                                      config: WebImageManagerConfig(maxVariantMemoryCost: variantMemoryLimit, variantMemoryAdmission: .whenReused))
        let signing: ImageServerConfig.Signing = keyHex.map { .signed(keyHex: $0, saltHex: saltHex ?? "") }
            ?? (environmentKeys.isEmpty ? .unsigned : .signedWithAnyOf(environmentKeys))
        for line in ignoredEnvironment { Console.error("webimage serve: \(line)\n") }
        var config = server
        if !sanitizesSVG {   // the process's own registry: the tool registered the sanitising coder at start
            CoderRegistry.shared.remove(SVGCoder.self)
            CoderRegistry.shared.add(SVGCoder(sanitizesPassthrough: false))
        }
        config.fallbackImage = fallbackURL.map { FallbackImage(url: $0, status: fallbackStatus, maxAge: fallbackMaxAge) }
        config.bindAddress = bind
        config.port = port
        config.signing = signing
        config.allowedHosts = allowedHosts
        if let cacheMaxAge { config.cacheMaxAge = cacheMaxAge }
        config.servesDemoPage = demo
        config.demoSamplesDirectory = DemoCommand.samplesDirectory()
        if let maxInFlight { config.maxInFlight = maxInFlight }
        if let queue { config.queueLimit = queue }
        config.presets = presets
        config.allowsSecurityOptions = allowsSecurityOptions
        config.localRoot = localRoot
        config.keepsSources = keepsSources
        config.runsNetworkThreadsInRealTime = runsNetworkThreadsInRealTime
        if let watermark {
            do {
                config.watermark = try await Self.loadWatermark(watermark, manager: manager)
            } catch {
                Console.error("webimage serve: --watermark \(watermark): \(error)\n")
                return 1
            }
        } else if let watermarkData {
            do {
                config.watermark = try WatermarkImage(image: try CoderRegistry.shared.decode(watermarkData))
            } catch {
                Console.error("webimage serve: IMGPROXY_WATERMARK_DATA: \(error)\n")
                return 1
            }
        }
        let server: ImageServer
        do {
            server = try ImageServer(manager: manager, config: config)
        } catch {
            Console.error("webimage serve: \(error)\n")
            return 1
        }
        let port: UInt16, running: Task<Void, any Error>
        do {
            (port, running) = try await server.start()
        } catch {
            Console.error("webimage serve: \(error)\n")
            return 1
        }
        let host = bind.contains(":") ? "[\(bind)]" : bind
        let base = "http://\(host):\(port)"
        if signing == .unsigned {
            Console.error("""
                webimage serve: WARNING: serving UNSIGNED URLs: anyone who reaches \(base) can make it fetch and process \
                any URL\(allowedHosts.isEmpty ? "" : " on the allowed hosts"). Use --key and --salt in production.\n
                """)
        }
        Console.write("listening on \(base)\n")
        let sample = "/rs:fit:256:256/plain/https://example.com/photo.jpg@webp"
        Console.write("sample: \(base)\(config.pathPrefix)/\(signing == .unsigned ? "insecure" : "<signature>")\(sample)\n")
        if config.servesDemoPage { Console.write("demo page: \(base)\(config.pathPrefix)/\n") }
        Console.flush()
        await Signals.waitForTermination()
        Console.error("webimage serve: stopping (draining requests under way)\n")
        running.cancel()
        _ = await running.result
        await manager.shutdown()
        Console.error("webimage serve: stopped\n")
        return 0
    }
}
