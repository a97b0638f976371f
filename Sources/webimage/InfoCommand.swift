import Foundation
import WebImage

/// `webimage info`: the facts of images (files or URLs) through the manager's
/// ``WebImageManager/loadImageInfo(url:options:context:)``, one line or one JSON object each.
struct InfoCommand {
    var json = false
    var cacheDirectory: URL?
    /// With `--placeholder-pixels DIR`: the pixels each placeholder encoder read, written as PNGs
    /// (what `scripts/placeholder-check.py` recomputes the references from).
    var pixelsDirectory: URL?
    var inputs: [String] = []

    /// Parses `arguments`, prints the facts of every input, and returns the exit status: 0 when
    /// all were read, 1 when any failed, 2 for a usage error.
    static func run(_ arguments: [String]) async -> Int32 {
        switch parse(arguments) {
        case .failure(let message):
            Console.error("webimage info: \(message)\n\n" + options.help)
            return 2
        case .success(let command):
            return await command.describeAll()
        }
    }

    static func parse(_ arguments: [String]) -> ParseResult<InfoCommand> {
        var command = InfoCommand()
        do {
            try options.parse(arguments, into: &command)
        } catch {
            return .failure(error.message)
        }
        if command.inputs.isEmpty { return .failure("no file or URL given") }
        return .success(command)
    }

    /// `webimage info`'s flags, declared once: ``parse(_:)`` reads them and `--help` prints them.
    static let options = CommandOptions<InfoCommand>(
        usage: "webimage info [options] FILE|URL...",
        summary: """
        the facts of each image through the manager, from a small decode (never a full-size one); one tab-separated line
        per input: input, format, width, height (upright), frames, bytes, alpha|opaque, EXIF orientation, colour profile
        name (- when none), BlurHash (4x3), ThumbHash (base64), average and dominant colours (#rrggbbaa), tier
        (none/memory/disk); or input, error, message (exit code 1)
        """,
        options: [
            .flag("--json", help: "one JSON object per input instead: /info's fields (all of them) plus file and tier") { $0.json = true },
            .folder("--cache-dir", \.cacheDirectory, default: "a temporary folder, removed at exit", help: "cache the facts and sources there"),
            .folder("--placeholder-pixels", \.pixelsDirectory,
                    help: "also write the pixels each encoder read (<n>-blurhash.png, RGB composited over white; <n>-thumbhash.png, "
                        + "RGBA) and add their paths to the JSON (scripts/placeholder-check.py)"),
        ],
        operand: { command, input in command.inputs.append(input) })

    func describeAll() async -> Int32 {
        let temporary = cacheDirectory == nil
            ? FileManager.default.temporaryDirectory.appendingPathComponent("webimage-info-\(ProcessInfo.processInfo.processIdentifier)")
            : nil
        defer { if let temporary { try? FileManager.default.removeItem(at: temporary) } }
        if let pixelsDirectory {
            do {
                try FileManager.default.createDirectory(at: pixelsDirectory, withIntermediateDirectories: true)
            } catch {
                Console.error("webimage info: cannot create \(pixelsDirectory.path): \(error.localizedDescription)\n")
                return 1
            }
        }
        let cache = ImageCache(directory: (cacheDirectory ?? temporary)!)
        let manager = WebImageManager(cache: cache, loader: LoadersManager(loaders: [Downloader(), FileLoader()]))
        var failed = false
        for (index, input) in inputs.enumerated() {
            do {
                let url = FetchCommand.url(from: input)
                let info = try await manager.loadImageInfo(url: url, options: [])
                var pixels: [String: String] = [:]
                if let pixelsDirectory, let url { pixels = try await writePixels(of: url, index: index, manager: manager, into: pixelsDirectory, info: info) }
                Console.write(line(for: info, input: input, pixels: pixels) + "\n")
            } catch {
                failed = true
                let message = (error as? WebImageError)?.description ?? "\(error)"
                if json {
                    let object = ["file": input, "error": message]
                    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
                    Console.write(String(decoding: data, as: UTF8.self) + "\n")
                } else {
                    Console.write("\(input)\terror\t\(message)\n")
                }
            }
        }
        await manager.shutdown()
        return failed ? 1 : 0
    }

    /// A JSON object (`file` first among sorted keys, plus `tier` and any pixel files), or a
    /// tab-separated line: input, format, width, height, frames, bytes, alpha, orientation, colour
    /// profile (- when none), BlurHash, ThumbHash, average and dominant colours (#rrggbbaa).
    func line(for info: ImageInfo, input: String, pixels: [String: String]) -> String {
        let tier = info.cacheType == .memory ? "memory" : info.cacheType == .disk ? "disk" : "none"
        if json {
            var object = (try? JSONSerialization.jsonObject(with: info.json())) as? [String: Any] ?? [:]
            object["file"] = input
            object["tier"] = tier
            for (key, value) in pixels { object[key] = value }
            let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data()
            return String(decoding: data, as: UTF8.self)
        }
        func hex(_ color: PixelColor) -> String {
            "#" + [color.red, color.green, color.blue, color.alpha].map { String(format: "%02x", $0) }.joined()
        }
        return [input, info.format.rawValue, "\(info.pixelSize.width)", "\(info.pixelSize.height)", "\(info.frameCount)",
                "\(info.byteCount)", info.hasAlpha ? "alpha" : "opaque", "\(info.orientation.rawValue)", info.colorProfileName ?? "-",
                info.blurHash, info.thumbHashBase64, hex(info.averageColor), hex(info.dominantColor), tier].joined(separator: "\t")
    }

    /// Writes the pixels the encoders read (the small decode the facts came from, as
    /// ``Image/placeholderSource(background:)`` gives them) and checks they give the same hashes.
    func writePixels(of url: URL, index: Int, manager: WebImageManager, into directory: URL, info: ImageInfo) async throws -> [String: String] {
        var context = WebImageContext()
        context.thumbnailPixelSize = PixelSize(width: 100, height: 100)
        let small = try await manager.loadImage(url: url, context: context).image
        let rgba = try small.placeholderSource()
        let rgb = try small.placeholderSource(background: .white)
        guard try BlurHash(encoding: small).string == info.blurHash, try ThumbHash(encoding: small).bytes == info.thumbHash else {
            throw WebImageError.rejected(url: url, reason: "the small decode does not give the facts' placeholders")
        }
        let blurPath = directory.appendingPathComponent("\(index)-blurhash.png").path
        let thumbPath = directory.appendingPathComponent("\(index)-thumbhash.png").path
        try CoderRegistry.shared.encode(rgb, as: .png).write(to: URL(fileURLWithPath: blurPath))
        try CoderRegistry.shared.encode(rgba, as: .png).write(to: URL(fileURLWithPath: thumbPath))
        return ["blurhash_pixels": blurPath, "thumbhash_pixels": thumbPath]
    }
}
