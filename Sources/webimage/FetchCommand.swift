import Foundation
import WebImage

/// `webimage fetch`: loads URLs through a ``WebImageManager`` and prints one tab-separated line each.
struct FetchCommand {
    var thumbnail: Int?
    var transformer: PipelineTransformer?
    var outputDirectory: URL?
    var cacheDirectory: URL?
    var concurrency = 6
    var refresh = false
    /// Options the `--keep-…` flags add.
    var keeps: WebImageOptions = []
    /// With `--format`: load encoded variants in this format (or the `--accept` choice) instead of images.
    var variantFormat: VariantFormat?
    var quality: Double?
    /// `--quality auto[:TARGET]`: the quality searched per picture.
    var automaticQuality: AutomaticQuality?
    var accept: String?
    var redis = RedisArguments()
    var s3 = S3Arguments()
    var urls: [String] = []

    /// What one URL gave.
    enum Loaded {
        case image(ImageResult)
        case variant(ImageVariant, url: URL)

        var cacheType: ImageCacheType {
            switch self {
            case .image(let result): result.cacheType
            case .variant(let variant, _): variant.cacheType
            }
        }
    }

    /// One URL's outcome.
    struct Row {
        var url: String
        var result: Result<Loaded, WebImageError>
        var elapsed: Duration

        /// `url, tier, width, height, bytes, ms`, or `url, error, message` (a variant's line adds its format).
        var line: String {
            switch result {
            case .success(let loaded):
                let tier = switch loaded.cacheType {
                case .memory: "memory"
                case .disk: "disk"
                case .none, .all: "none"
                }
                switch loaded {
                case .image(let image):
                    return [url, tier, "\(image.image.width)", "\(image.image.height)", image.data.map { "\($0.count)" } ?? "-",
                            DemoCommand.milliseconds(elapsed)].joined(separator: "\t")
                case .variant(let variant, _):
                    return [url, tier, "\(variant.pixelSize.width)", "\(variant.pixelSize.height)", "\(variant.data.count)",
                            DemoCommand.milliseconds(elapsed), variant.format.rawValue].joined(separator: "\t")
                }
            case .failure(let error):
                return [url, "error", error.description].joined(separator: "\t")
            }
        }
    }

    /// Parses `arguments`, loads every URL, and returns the exit status: 0 when all loaded, 1 when
    /// any failed, 2 for a usage error.
    static func run(_ arguments: [String]) async -> Int32 {
        switch parse(arguments) {
        case .failure(let message):
            Console.error("webimage fetch: \(message)\n\n" + options.help)
            return 2
        case .success(let command):
            return await command.fetchAll()
        }
    }

    static func parse(_ arguments: [String]) -> ParseResult<FetchCommand> {
        var command = FetchCommand()
        do {
            try options.parse(arguments, into: &command)
        } catch {
            return .failure(error.message)
        }
        if command.urls.isEmpty { return .failure("no URL given") }
        do {
            try command.s3.validate()
        } catch {
            return .failure("\(error)")
        }
        if command.variantFormat == nil && (command.quality != nil || command.accept != nil || command.automaticQuality != nil) {
            return .failure("--quality and --accept need --format")
        }
        if case .automatic = command.variantFormat { command.variantFormat = .automatic(accept: command.accept) }
        if case .best = command.variantFormat { command.variantFormat = .best(BestFormat(accept: command.accept)) }
        return .success(command)
    }

    /// A URL from an argument: as given when it has a scheme, else a local file path.
    static func url(from argument: String) -> URL? {
        if argument.contains("://") || argument.hasPrefix("data:") { return URL(string: argument) }
        return argument.isEmpty ? nil : URL(fileURLWithPath: argument)
    }

    /// The manager of this run: the disk cache, Redis and the object store as the options say, and
    /// loaders for http(s), files and s3:// (the options were checked by `parse`).
    func makeManager() -> WebImageManager {
        let inner = redis.cache(over: cacheDirectory.map { ImageCache(directory: $0) } ?? ImageCache.shared)
        let downloader = Downloader(config: DownloaderConfig(maxConcurrentDownloads: concurrency))
        let cache = (try? s3.cache(over: inner)) ?? inner
        let loader = (try? s3.loaders([downloader, FileLoader()])) ?? LoadersManager(loaders: [downloader, FileLoader()])
        return WebImageManager(cache: cache, loader: loader)
    }

    func fetchAll() async -> Int32 {
        if let outputDirectory {
            do {
                try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            } catch {
                Console.error("webimage fetch: cannot create \(outputDirectory.path): \(error.localizedDescription)\n")
                return 1
            }
        }
        let manager = makeManager()
        let files = outputDirectory.map { OutputFiles(directory: $0) }
        var encoding = EncodeOptions()
        if let quality { encoding.compressionQuality = quality / 100 }
        encoding.automaticQuality = automaticQuality
        let variantFormat = self.variantFormat, variantEncoding = encoding
        var context = WebImageContext()
        if let thumbnail { context.thumbnailPixelSize = PixelSize(width: thumbnail, height: thumbnail) }
        context.transformer = transformer
        // Disk writes run in the background; the shutdown below finishes them before the process exits.
        let options = (refresh ? WebImageOptions.refreshCached : []).union(keeps)
        let loadContext = context
        let progress = ProgressBar(total: urls.count, enabled: isatty(STDERR_FILENO) == 1)
        let start = ContinuousClock.now
        var rows = [Row?](repeating: nil, count: urls.count)
        await withTaskGroup(of: (Int, Row).self) { group in
            var next = 0
            func addNext() {
                guard next < urls.count else { return }
                let index = next, argument = urls[index]
                next += 1
                group.addTask { [manager, options, loadContext] in
                    let began = ContinuousClock.now
                    let result: Result<Loaded, WebImageError>
                    do {
                        let url = Self.url(from: argument)
                        if let variantFormat {
                            let variant = try await manager.loadVariant(url: url, format: variantFormat, encoding: variantEncoding,
                                                                        options: options, context: loadContext)
                            // Written as soon as it is loaded, by the task that loaded it.
                            if let files, let url { try Self.write(variant, from: url, into: files) }
                            result = .success(.variant(variant, url: url!))
                        } else {
                            result = .success(.image(try await manager.loadImage(url: url, options: options, context: loadContext)))
                        }
                    } catch let error as WebImageError {
                        result = .failure(error)
                    } catch {
                        result = .failure(.rejected(url: URL(fileURLWithPath: argument), reason: "\(error)"))
                    }
                    return (index, Row(url: argument, result: result, elapsed: ContinuousClock.now - began))
                }
            }
            for _ in 0..<concurrency { addNext() }
            for await (index, row) in group {
                rows[index] = row
                progress.advance()
                addNext()
            }
        }
        progress.finish()
        await manager.shutdown()
        var failures = 0
        var tiers: [String: Int] = [:]
        for case var row? in rows {
            if case .success(.image(let loaded)) = row.result, let files {
                if let error = write(loaded, into: files) { row.result = .failure(error) }
            }
            switch row.result {
            case .success(let loaded): tiers[loaded.cacheType == .none ? "network" : loaded.cacheType == .disk ? "disk" : "memory", default: 0] += 1
            case .failure: failures += 1
            }
            Console.write(row.line + "\n")
        }
        let summary = ["network", "disk", "memory"].map { "\(tiers[$0] ?? 0) from \($0)" }.joined(separator: ", ")
        let peak = ProcessMemory.peakResidentMiB().map { ", peak memory \($0) MiB" } ?? ""
        Console.error("fetched \(urls.count - failures) of \(urls.count) (\(summary)), \(failures) failed, in \(DemoCommand.milliseconds(ContinuousClock.now - start)) ms\(peak)\n")
        return failures == 0 ? 0 : 1
    }

    /// Writes `loaded` into the output directory in its source format (PNG or JPEG; PNG for anything
    /// else), named after the URL's last path component; returns the error if it cannot.
    func write(_ loaded: ImageResult, into files: OutputFiles) -> WebImageError? {
        let format: ImageFormat = loaded.image.format == .jpeg && !loaded.image.pixelFormat.hasAlpha ? .jpeg : .png
        let name = files.reserveName(for: loaded.url, fileExtension: format.fileExtension ?? "png")
        do {
            try files.write(try CoderRegistry.shared.encode(loaded.image, as: format), as: name)
            return nil
        } catch {
            return .rejected(url: loaded.url, reason: "could not write \(name): \(error)")
        }
    }

    /// Writes a variant's bytes as they are, with its format's extension.
    /// - Throws: ``WebImageError/rejected(url:reason:)`` when the file cannot be written.
    static func write(_ variant: ImageVariant, from url: URL, into files: OutputFiles) throws(WebImageError) {
        let name = files.reserveName(for: url, fileExtension: variant.format.fileExtension ?? variant.format.rawValue)
        do {
            try files.write(variant.data, as: name)
        } catch {
            throw .rejected(url: url, reason: "could not write \(name): \(error)")
        }
    }
}

/// A one-line progress bar on standard error, drawn only when it is a terminal.
final class ProgressBar {
    let total: Int
    let enabled: Bool
    private var done = 0

    init(total: Int, enabled: Bool) {
        self.total = total
        self.enabled = enabled
    }

    func advance() {
        done += 1
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = width * done / total
        Console.error("\r[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "] \(done)/\(total)")
    }

    func finish() {
        if enabled && total > 0 { Console.error("\n") }
    }
}
