import Foundation
import WebImage

/// `webimage cache stats|sweep|fill DIR`: inspect, sweep or fill a disk cache directory.
enum CacheCommand {
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count >= 2 else {
            Console.error("webimage cache: expected a subcommand and a directory\n\n" + Usage.text)
            return 2
        }
        let directory = URL(fileURLWithPath: arguments[1], isDirectory: true)
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
