import CRedisBaseline
import Foundation
import WebImage
import WebImageRedis

/// The shared tier on Redis (`bench redis`), against a `redis-server` this group starts on a free
/// port (needs `apt-get install redis-server`):
///
/// - **A Redis hit through the manager**: `loadVariant` of a ~20 KB JPEG thumbnail whose only copy is
///   in Redis (no memory or disk tier), ×1000 one after another, next to a bare hiredis `GET` loop in C
///   on the same value and to `redis-benchmark -t set,get -d 20000 -c 1` (goal ≥ 0.8×).
/// - **A cold fleet**: four `webimage fetch` processes started at once over the same 1000 URLs from
///   nginx (`/files/`, 20 KB JPEGs), with and without `--redis`: total time and origin requests
///   (nginx's counter) side by side. `BENCH_REDIS_FLEET=0` skips it.
enum RedisBenchmarks {
    static func run(iterations: Int) async throws -> [Row] {
        guard let serverPath = Measure.which("redis-server"), let cli = Measure.which("redis-cli"),
              let benchmark = Measure.which("redis-benchmark") else {
            return [Row(name: "redis benchmarks", ours: 0, reference: "hiredis", referenceValue: nil, goal: nil,
                        note: "apt-get install redis-server (redis-server, redis-cli, redis-benchmark)")]
        }
        let port = try freePort()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-redis-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: serverPath)
        server.arguments = ["--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory.path,
                            "--loglevel", "warning", "--maxmemory", "1gb", "--maxmemory-policy", "allkeys-lru"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        // SIGKILL: started from a Swift task, the child inherits libdispatch's worker-thread signal
        // mask (SIGTERM blocked; Foundation's Process keeps it), and a cache without persistence loses nothing.
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        var ready = false
        for _ in 0..<500 where !ready {
            ready = (try? Measure.run(cli, ["-p", "\(port)", "PING"]))?.output.contains("PONG") == true
            if !ready { usleep(10_000) }
        }
        guard ready else { throw BenchError("redis-server did not start on port \(port)") }
        var rows: [Row] = []
        if let placement = CorePlacement(server: server.processIdentifier) {
            try placement.separate()
            rows += try await hitRows(port: port, cli: cli, benchmark: benchmark, iterations: iterations, placement: placement.label)
            try placement.restore()
            rows += try await hitRows(port: port, cli: cli, benchmark: benchmark, iterations: iterations, placement: nil)
        } else {
            rows += try await hitRows(port: port, cli: cli, benchmark: benchmark, iterations: iterations, placement: nil)
        }
        if ProcessInfo.processInfo.environment["BENCH_REDIS_FLEET"] != "0" { rows += try fleetRows(port: port, cli: cli, work: directory) }
        return rows
    }

    // MARK: - A hit

    /// The hit rows. `placement` names how the processes were placed on cores (the rows with the
    /// goal); `nil`: left to the scheduler, one row without a goal.
    private static func hitRows(port: Int, cli: String, benchmark: String, iterations: Int, placement: String?) async throws -> [Row] {
        let source = try Data(contentsOf: packageRoot.appendingPathComponent("Samples/mandelbrot.jpg"))
        let image = try CoderRegistry.shared.decode(source)
        let bytes = try CoderRegistry.shared.encode(image, as: .jpeg, options: EncodeOptions(compressionQuality: 0.9))
        let local = ImageCache(directory: URL(fileURLWithPath: "/dev/null/no-disk-tier"),
                               config: ImageCacheConfig(shouldCacheImagesInMemory: false, diskSweepInterval: nil))
        let cache = RedisImageCache(local: local, redis: RedisTierConfig(endpoints: [RedisEndpoint(host: "127.0.0.1", port: port)],
                                                                         namespace: "bench"))
        let manager = WebImageManager(cache: cache, config: WebImageManagerConfig(maxVariantMemoryCost: 0))
        let url = URL(string: "https://bench.invalid/photo.jpg")!
        guard let key = manager.variantCacheKey(for: url, format: .exactly(.jpeg)), let redisKey = cache.shared.redisKey(forKey: key) else {
            throw BenchError("no variant key")
        }
        guard await cache.shared.setValue(bytes, metadata: DiskCacheMetadata(entityTag: ImageVariant.entityTag(of: bytes), pixelSize: image.size),
                                          forKey: key) else { throw BenchError("SET failed") }
        let first = try await manager.loadVariant(url: url, format: .exactly(.jpeg))
        guard first.data == bytes, first.cacheType == .disk, local.diskCache == nil else { throw BenchError("not a Redis hit") }
        guard let length = Int(try Measure.run(cli, ["-p", "\(port)", "STRLEN", redisKey]).output.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw BenchError("STRLEN failed") }
        let count = 1000
        var failed = false
        let times = try await interleavedAsync(iterations: iterations) {
            for _ in 0..<count { _ = try await manager.loadVariant(url: url, format: .exactly(.jpeg)) }
        } reference: {
            if redis_baseline_get_loop("127.0.0.1", Int32(port), redisKey, Int32(count), length) < 0 { failed = true }
        }
        guard !failed else { throw BenchError("the hiredis loop failed") }
        let name = "Redis hit via loadVariant, \(bytes.count / 1000) KB JPEG (\(length) B value) x\(count)"
        guard let placement else {
            await manager.shutdown()
            return [Row(name: name + ", placed by the scheduler", ours: times.ours, reference: "bare hiredis GET loop in C x\(count)",
                        referenceValue: times.reference, goal: nil,
                        note: "the C loop takes 17-25 us a GET when the scheduler puts it on redis-server's core, about 54 us when not")]
        }
        // The tier alone (no manager, no key computing): how much of the hit is the hop to a
        // connection thread and back.
        let tierTimes = try await interleavedAsync(iterations: iterations) {
            for _ in 0..<count { guard await cache.shared.value(forKey: key) != nil else { throw BenchError("tier miss") } }
        } reference: {
            if redis_baseline_get_loop("127.0.0.1", Int32(port), redisKey, Int32(count), length) < 0 { failed = true }
        }
        // The process's cache in front of the tier (RedisImageCache.cachedData: the local tiers, then Redis).
        let cacheTimes = try await interleavedAsync(iterations: iterations) {
            for _ in 0..<count { guard try await cache.cachedData(forKey: key) != nil else { throw BenchError("cache miss") } }
        } reference: {
            if redis_baseline_get_loop("127.0.0.1", Int32(port), redisKey, Int32(count), length) < 0 { failed = true }
        }
        let errors = cache.shared.statistics.errors
        guard errors == 0 else { throw BenchError("\(errors) Redis errors during the run") }
        let csv = try Measure.run(benchmark, ["-p", "\(port)", "-t", "set,get", "-d", "\(length)", "-n", "\(count * 10)", "-c", "1", "--csv"]).output
        let getLine = csv.split(separator: "\n").first { $0.hasPrefix("\"GET\"") }
        let rate = getLine.flatMap { Double($0.split(separator: ",")[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
        var rows = [Row(name: name + ", " + placement, ours: times.ours, reference: "bare hiredis GET loop in C x\(count)",
                        referenceValue: times.reference, goal: 0.8)]
        rows.append(Row(name: "RedisTier.value alone (no manager), same value x\(count)", ours: tierTimes.ours,
                        reference: "bare hiredis GET loop in C x\(count)", referenceValue: tierTimes.reference, goal: nil))
        rows.append(Row(name: "RedisImageCache.cachedData (no manager), same value x\(count)", ours: cacheTimes.ours,
                        reference: "bare hiredis GET loop in C x\(count)", referenceValue: cacheTimes.reference, goal: nil))
        rows.append(Row(name: name + ", " + placement, ours: times.ours, reference: "redis-benchmark -t get -d \(length) -c 1 (x\(count))",
                        referenceValue: rate.map { Double(count) / $0 * 1000 }, goal: 0.8, note: "redis-benchmark printed no GET rate"))
        await manager.shutdown()
        return rows
    }

    /// ``Measure/interleaved(iterations:_:reference:)`` for an async `ours`.
    static func interleavedAsync(iterations: Int, _ ours: () async throws -> Void,
                                         reference: () throws -> Void) async throws -> (ours: Double, reference: Double) {
        try await ours()
        try reference()
        var oursTimes: [Double] = []
        var referenceTimes: [Double] = []
        for _ in 0..<iterations {
            var start = ContinuousClock.now
            try await ours()
            oursTimes.append(Measure.milliseconds(.now - start))
            start = .now
            try reference()
            referenceTimes.append(Measure.milliseconds(.now - start))
        }
        return (oursTimes.sorted()[iterations / 2], referenceTimes.sorted()[iterations / 2])
    }

    // MARK: - A cold fleet

    private static func fleetRows(port: Int, cli: String, work: URL) throws -> [Row] {
        guard let curl = Measure.which("curl"), (try? Measure.run(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}",
                                                                         "http://127.0.0.1:8089/files/999.jpg"]))?.output == "200" else {
            return [Row(name: "cold fleet of 4 processes", ours: 0, reference: "without Redis", referenceValue: nil, goal: nil,
                        note: "Benchmarks/nginx/serve.sh start")]
        }
        guard FileManager.default.isExecutableFile(atPath: Environment.tool) else {
            return [Row(name: "cold fleet of 4 processes", ours: 0, reference: "without Redis", referenceValue: nil, goal: nil,
                        note: "swift build -c release --product webimage")]
        }
        let urls = (0..<1000).map { "http://127.0.0.1:8089/files/\($0).jpg" }
        var with: [(ms: Double, fetches: Int)] = []
        var without: [(ms: Double, fetches: Int)] = []
        for round in 0..<3 {
            for shared in [true, false] {
                _ = try Measure.run(cli, ["-p", "\(port)", "FLUSHALL"])
                let before = try nginxRequests(curl)
                let start = ContinuousClock.now
                var processes: [Process] = []
                for index in 0..<4 {
                    let process = Process()
                    process.executableURL = URL(fileURLWithPath: Environment.tool)
                    let cacheDirectory = work.appendingPathComponent("fleet-\(round)-\(shared)-\(index)").path
                    process.arguments = ["fetch", "--cache-dir", cacheDirectory]
                        + (shared ? ["--redis", "redis://127.0.0.1:\(port)", "--redis-namespace", "fleet-\(round)"] : []) + urls
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    try process.run()
                    processes.append(process)
                }
                for process in processes {
                    process.waitUntilExit()
                    guard process.terminationStatus == 0 else { throw BenchError("webimage fetch failed in the fleet run") }
                }
                let elapsed = Measure.milliseconds(.now - start)
                let fetches = try nginxRequests(curl) - before - 1
                if shared { with.append((elapsed, fetches)) } else { without.append((elapsed, fetches)) }
            }
        }
        let ours = with.sorted { $0.ms < $1.ms }[1], reference = without.sorted { $0.ms < $1.ms }[1]
        return [Row(name: "cold fleet: 4 processes x the same 1000 URLs, with Redis (origin requests: \(with.map { "\($0.fetches)" }.joined(separator: "/")))",
                    ours: ours.ms, reference: "the same without Redis (origin requests: \(without.map { "\($0.fetches)" }.joined(separator: "/")))",
                    referenceValue: reference.ms, goal: nil)]
    }

    /// nginx's request counter (`stub_status`; the request asking counts itself).
    private static func nginxRequests(_ curl: String) throws -> Int {
        let text = try Measure.run(curl, ["-s", "http://127.0.0.1:8089/status"]).output
        let lines = text.split(separator: "\n")
        guard lines.count >= 3, let requests = lines[2].split(separator: " ").last.flatMap({ Int($0) }) else {
            throw BenchError("nginx /status answered \(text)")
        }
        return requests
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { throw BenchError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
