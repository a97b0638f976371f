import Foundation
import Synchronization
import WebImage

/// Cache benchmarks: the memory tier against a bare `Mutex<[String: Image]>`, disk hits and writes
/// against plain `read()`/`write()` + `rename`, and a 100k-entry sweep against `find`.
enum CacheBenchmarks {
    static func run(iterations: Int) async throws -> [Row] {
        var rows: [Row] = []
        let image = try Image(width: 64, height: 64, pixelFormat: .rgba8, pixels: [UInt8](repeating: 7, count: 64 * 64 * 4))
        let keys = (0..<1000).map { "https://example.com/images/\($0).jpg" }
        let operations = 200_000

        // Memory tier: reads of present keys.
        let cache = MemoryCache<String, Image>(totalCostLimit: 0, countLimit: 0)
        let bare = Mutex<[String: Image]>([:])
        for key in keys {
            cache.setValue(image, forKey: key, cost: image.cost)
            bare.withLock { $0[key] = image }
        }
        let (ours, reference) = Measure.interleaved(iterations: iterations) {
            for index in 0..<operations { _ = cache.value(forKey: keys[index % 1000]) }
        } reference: {
            for index in 0..<operations { _ = bare.withLock { $0[keys[index % 1000]] } }
        }
        rows.append(Row(name: "memory cache get x\(operations / 1000)k", ours: ours, reference: "Mutex<[String: Image]> get",
                        referenceValue: reference, goal: 0.5))
        let (oursSet, referenceSet) = Measure.interleaved(iterations: iterations) {
            for index in 0..<operations { cache.setValue(image, forKey: keys[index % 1000], cost: image.cost) }
        } reference: {
            for index in 0..<operations { bare.withLock { $0[keys[index % 1000]] = image } }
        }
        rows.append(Row(name: "memory cache set x\(operations / 1000)k", ours: oursSet, reference: "Mutex<[String: Image]> set",
                        referenceValue: referenceSet, goal: 0.5))

        // Disk tier.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-cache-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sample = packageRoot.appendingPathComponent("Samples/mandelbrot.jpg")
        let jpeg = try Data(contentsOf: sample)
        let config = ImageCacheConfig(diskSweepInterval: nil)
        let imageCache = ImageCache(directory: directory.appendingPathComponent("cache"), config: config)
        try await imageCache.storeData(jpeg, forKey: "hit.jpg")
        let query = ImageCacheQuery(cacheType: .disk, promotesToMemory: false)
        let path = try requireBench(imageCache.cachePath(forKey: "hit.jpg"))
        let (diskHit, plainHit) = try await DownloadBenchmarks.interleaved(iterations * 4) {
            _ = try await imageCache.query(forKey: "hit.jpg", query: query)
        } reference: {
            _ = try CoderRegistry.shared.decode(try readPlain(path))
        }
        rows.append(Row(name: "disk hit: read + decode \(jpeg.count / 1000) KB JPEG", ours: diskHit, reference: "read() + decode",
                        referenceValue: plainHit, goal: 0.9))

        let diskCache = try DiskCache(directory: directory.appendingPathComponent("writes"), config: config)
        let plainDirectory = directory.appendingPathComponent("plain").path
        try FileManager.default.createDirectory(atPath: plainDirectory, withIntermediateDirectories: true)
        let counter = Mutex(0)
        let (diskWrite, plainWrite) = try await DownloadBenchmarks.interleaved(iterations * 4) {
            let index = counter.withLock { $0 += 1; return $0 % 50 }
            try await diskCache.store(jpeg, forKey: "write-\(index).jpg")
        } reference: {
            let index = counter.withLock { $0 += 1; return $0 % 50 }
            try writePlain(jpeg, to: plainDirectory + "/write-\(index).jpg")
        }
        rows.append(Row(name: "disk write \(jpeg.count / 1000) KB (temp + rename)", ours: diskWrite, reference: "write() + rename",
                        referenceValue: plainWrite, goal: 0.9))

        // Sweep of 100k entries (nothing to remove: the cost of looking).
        let sweepDirectory = directory.appendingPathComponent("sweep")
        try FileManager.default.createDirectory(at: sweepDirectory, withIntermediateDirectories: true)
        for index in 0..<100_000 {
            let fd = open(sweepDirectory.path + "/" + String(format: "%032x", index), O_WRONLY | O_CREAT, 0o600)
            _ = write(fd, "x", 1)
            close(fd)
        }
        let sweeping = try DiskCache(directory: sweepDirectory, config: ImageCacheConfig(maxDiskAge: 3600, maxDiskSize: 1 << 40, diskSweepInterval: nil))
        let sweep = await medianAsync(iterations: 5) { _ = await sweeping.removeExpiredData() }
        let find = try Measure.process("/usr/bin/find", [sweepDirectory.path, "-type", "f", "-printf", "%s %A@\\n"], iterations: 5)
        rows.append(Row(name: "sweep 100k entries", ours: sweep, reference: "find -printf '%s %A@'", referenceValue: find, goal: 0.5))
        return rows
    }

    static func medianAsync(iterations: Int, _ body: () async throws -> Void) async rethrows -> Double {
        try await body()
        var samples: [Double] = []
        for _ in 0..<iterations {
            let start = ContinuousClock.now
            try await body()
            samples.append(Measure.milliseconds(ContinuousClock.now - start))
        }
        return samples.sorted()[samples.count / 2]
    }

    static func readPlain(_ path: String) throws -> Data {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw BenchError("cannot open \(path)") }
        defer { close(fd) }
        var info = stat()
        fstat(fd, &info)
        var data = Data(count: Int(info.st_size))
        _ = data.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return data
    }

    static func writePlain(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw BenchError("cannot create \(temporary)") }
        _ = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        rename(temporary, path)
    }
}

func requireBench<T>(_ value: T?) throws -> T {
    guard let value else { throw BenchError("missing value") }
    return value
}
