import Foundation
import WebImage

/// `webimage cache stats|sweep|clear|fill [DIR | --cache-dir DIR]`: inspect, sweep, empty or fill a
/// disk cache directory (by default the one `WebImageManager.shared` uses).
struct CacheCommand {
    var subcommand: String?
    var directory: URL?
    var maxAge: Int?
    var maxSize: Int?
    var count = 100
    var size = 64

    /// `webimage cache`'s flags, declared once: ``run(_:)`` reads them and `--help` prints them.
    static let options = CommandOptions<CacheCommand>(
        usage: "webimage cache stats|sweep|clear|fill [DIR | --cache-dir DIR] [options]",
        summary: """
        stats: entries and bytes of a disk cache directory; sweep: remove expired entries, then least recently used ones
        down to half of --max-size, and print the report; clear: remove every entry; fill: store --count generated PNG
        images (keys fill-0.png ...)
        """,
        options: [
            .folder("--cache-dir", \.directory, default: "the shared cache's folder", help: "the cache directory (or DIR)"),
            count("--max-age", "SECONDS", \.maxAge, help: "sweep: entries older than this expire"),
            count("--max-size", "BYTES", \.maxSize, help: "sweep: the size to stay under"),
            count("--count", "N", \.count, default: "100", help: "fill: how many images"),
            count("--size", "PIXELS", \.size, default: "64", help: "fill: their side"),
        ],
        operand: { command, text throws(ArgumentError) in
            if command.subcommand == nil { command.subcommand = text.lowercased() } else if command.directory == nil {
                command.directory = URL(fileURLWithPath: text, isDirectory: true)
            } else {
                throw ArgumentError(message: "unexpected argument \(text)")
            }
        })

    private static func count(_ name: String, _ placeholder: String, _ path: WritableKeyPath<CacheCommand, Int?> & Sendable,
                              help: String) -> CommandOption<CacheCommand> {
        .value(name, placeholder, need: "a number", help: help) { command, text in
            guard let value = Int(text), value >= 0 else { return false }
            command[keyPath: path] = value
            return true
        }
    }

    private static func count(_ name: String, _ placeholder: String, _ path: WritableKeyPath<CacheCommand, Int> & Sendable,
                              default defaultValue: String, help: String) -> CommandOption<CacheCommand> {
        .value(name, placeholder, need: "a positive number", default: defaultValue, help: help) { command, text in
            guard let value = Int(text), value > 0 else { return false }
            command[keyPath: path] = value
            return true
        }
    }

    static func run(_ arguments: [String]) async -> Int32 {
        var command = CacheCommand()
        do {
            try options.parse(arguments, into: &command)
        } catch {
            Console.error("webimage cache: \(error.message)\n")
            return 2
        }
        guard let subcommand = command.subcommand else {
            Console.error("webimage cache: expected a subcommand\n\n" + options.help)
            return 2
        }
        let directory = command.directory ?? ImageCacheConfig.defaultDiskCacheDirectory.appendingPathComponent("default", isDirectory: true)
        var config = ImageCacheConfig(diskSweepInterval: nil)
        if let age = command.maxAge { config.maxDiskAge = TimeInterval(age) }
        if let size = command.maxSize { config.maxDiskSize = size }
        let cache: DiskCache
        do {
            cache = try DiskCache(directory: directory, config: config)
        } catch {
            Console.error("webimage cache: \(error)\n")
            return 1
        }
        switch subcommand {
        case "stats":
            Console.write("entries\t\(await cache.count())\nbytes\t\(await cache.totalSize())\n")
        case "sweep":
            let start = ContinuousClock.now
            let report = await cache.removeExpiredData()
            let elapsed = DemoCommand.milliseconds(ContinuousClock.now - start)
            Console.write("expired\t\(report.expiredCount)\nevicted\t\(report.evictedCount)\nremoved bytes\t\(report.removedBytes)\n"
                + "remaining\t\(report.remainingCount)\nremaining bytes\t\(report.remainingBytes)\nms\t\(elapsed)\n")
        case "clear":
            let count = await cache.count()
            await cache.removeAll()
            Console.write("removed\t\(count)\nremaining\t\(await cache.count())\n")
        case "fill":
            return await fill(cache, count: command.count, size: command.size)
        default:
            Console.error("webimage cache: unknown subcommand \(subcommand)\n")
            return 2
        }
        return 0
    }

    /// Stores `count` distinct `size`×`size` PNG images (keys `fill-N.png`), printing each key once it
    /// is on disk.
    static func fill(_ cache: DiskCache, count: Int, size: Int) async -> Int32 {
        for number in 0..<count {
            let pixels = (0..<(size * size)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ number) }
            do {
                let image = try Image(width: size, height: size, pixelFormat: .gray8, pixels: pixels)
                let data = try CoderRegistry.shared.encode(image, as: .png, options: EncodeOptions(pngCompressionLevel: 1))
                try await cache.store(data, forKey: "fill-\(number).png")
                Console.write("fill-\(number).png\n")
                Console.flush()
            } catch {
                Console.error("webimage cache fill: \(error)\n")
                return 1
            }
        }
        return 0
    }
}
