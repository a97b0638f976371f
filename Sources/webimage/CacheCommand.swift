import Foundation
import WebImage

/// `webimage cache stats|sweep|clear|fill [DIR | --cache-dir DIR]`: inspect, sweep, empty or fill a
/// disk cache directory (by default the one `WebImageManager.shared` uses).
enum CacheCommand {
    static func run(_ arguments: [String]) async -> Int32 {
        guard var subcommand = arguments.first else {
            Console.error("webimage cache: expected a subcommand\n\n" + Usage.text)
            return 2
        }
        subcommand = subcommand.lowercased()
        var rest = Array(arguments.dropFirst())
        var directory = ImageCacheConfig.defaultDiskCacheDirectory.appendingPathComponent("default", isDirectory: true)
        if let flag = rest.firstIndex(of: "--cache-dir") {
            guard flag + 1 < rest.count else {
                Console.error("webimage cache: --cache-dir needs a directory\n")
                return 2
            }
            directory = URL(fileURLWithPath: rest[flag + 1], isDirectory: true)
            rest.removeSubrange(flag...(flag + 1))
        } else if let first = rest.first, !first.hasPrefix("--") {
            directory = URL(fileURLWithPath: first, isDirectory: true)
            rest.removeFirst()
        }
        let arguments = [subcommand, directory.path] + rest
        var options: [String: Int] = [:]
        var index = 2
        while index + 1 < arguments.count, arguments[index].hasPrefix("--"), let value = Int(arguments[index + 1]) {
            options[String(arguments[index].dropFirst(2))] = value
            index += 2
        }
        if index < arguments.count {
            Console.error("webimage cache: unexpected argument \(arguments[index])\n")
            return 2
        }
        var config = ImageCacheConfig(diskSweepInterval: nil)
        if let age = options["max-age"] { config.maxDiskAge = TimeInterval(age) }
        if let size = options["max-size"] { config.maxDiskSize = size }
        let cache: DiskCache
        do {
            cache = try DiskCache(directory: directory, config: config)
        } catch {
            Console.error("webimage cache: \(error)\n")
            return 1
        }
        switch arguments[0] {
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
            return await fill(cache, count: options["count"] ?? 100, size: options["size"] ?? 64)
        default:
            Console.error("webimage cache: unknown subcommand \(arguments[0])\n")
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
