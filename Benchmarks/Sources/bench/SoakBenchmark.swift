import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebImage

/// The soak: 10 000 loads over 1 000 URLs from nginx (half of them repeating a recent URL), one in ten
/// cancelled at a random moment, three in ten with a random thumbnail size, through a manager whose
/// memory tier is limited to 64 MB and disk tier to 32 MB with sweeps running. Run in a fresh process
/// (`bench soak-child`) so its peak RSS is its own.
enum SoakBenchmark {
    static let loadCount = 10_000
    static let urlCount = 1_000
    static let memoryLimit = 64 << 20
    static let diskLimit = 32 << 20
    static let deadline = Duration.seconds(300)
    static let statusURL = URL(string: "http://127.0.0.1:8089/status")!

    /// What the child reports.
    struct Outcome: Codable {
        var succeeded = 0
        var cancelled = 0
        var failed = 0
        var notFromCache = 0
        var requests = 0
        var downloads = 0
        var networkTasks = 0
        var baselineRSS = 0.0
        var peakRSS = 0.0
        var peakDiskBytes = 0
        var seconds = 0.0
        var firstFailure: String?
    }

    static func run() throws -> [Row] {
        guard Environment.missingReferences().allSatisfy({ !$0.hasPrefix("nginx") }) else {
            return [Row(name: "soak", ours: 0, reference: "nginx on 127.0.0.1:8089", referenceValue: nil,
                        note: "run Benchmarks/nginx/serve.sh start (apt-get install nginx)")]
        }
        let (status, output) = try Measure.run(CommandLine.arguments[0], ["soak-child"])
        guard status == 0, let line = output.split(separator: "\n").last(where: { $0.hasPrefix("{") }),
              let outcome = try? JSONDecoder().decode(Outcome.self, from: Data(line.utf8)) else {
            throw BenchError("soak-child failed (status \(status)): \(output.suffix(2000))")
        }
        print(String(format: "soak: %d loads in %.1f s: %d succeeded, %d cancelled, %d failed%@; %d requests to nginx, "
                     + "%d network tasks started by the Downloader, %d downloads asked by the manager (thumbnail sizes of one URL share one), "
                     + "%d results not from a cache",
                     loadCount, outcome.seconds, outcome.succeeded, outcome.cancelled, outcome.failed,
                     outcome.firstFailure.map { " (first: \($0))" } ?? "", outcome.requests, outcome.networkTasks, outcome.downloads,
                     outcome.notFromCache))
        if outcome.failed > 0 || outcome.succeeded + outcome.cancelled != loadCount {
            throw BenchError("soak: some loads failed or never ended")
        }
        // Every request nginx saw is a network task the Downloader started (no duplicate or hidden
        // request); a task that never reached nginx was one whose callers all cancelled first; and the
        // manager asked for no more downloads than results that came from no cache (plus cancellations).
        if outcome.requests > outcome.networkTasks || outcome.networkTasks - outcome.requests > outcome.cancelled
            || outcome.networkTasks > outcome.downloads || outcome.downloads > outcome.notFromCache + outcome.cancelled {
            throw BenchError("soak: \(outcome.requests) requests, \(outcome.networkTasks) network tasks, \(outcome.downloads) downloads, "
                             + "\(outcome.notFromCache) uncached results")
        }
        let megabyte = Double(1 << 20)
        let allowedRSS = outcome.baselineRSS + Double(memoryLimit) / megabyte + 64
        return [
            Row(name: String(format: "soak peak RSS (64 MB memory limit; %.0f MB before loading)", outcome.baselineRSS),
                ours: outcome.peakRSS, reference: "before + limit + 64 MB margin", referenceValue: allowedRSS, goal: 1.0,
                note: "lower is better; ratio = allowed / peak", unit: "MB"),
            Row(name: "soak peak disk tier size (32 MB limit)", ours: Double(outcome.peakDiskBytes) / megabyte,
                reference: "limit + 1 MB margin", referenceValue: Double(diskLimit) / megabyte + 1, goal: 1.0,
                note: "lower is better; ratio = allowed / peak", unit: "MB"),
            Row(name: "soak: requests nginx served vs network tasks the Downloader started",
                ours: Double(outcome.requests), reference: "network tasks", referenceValue: Double(outcome.networkTasks), goal: 1.0,
                note: "ratio = tasks / requests: above 1 only by tasks cancelled before sending", unit: "req"),
        ]
    }

    /// The child process: runs the soak and prints its ``Outcome`` as one JSON line.
    static func child() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-soak-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = ImageCache(directory: directory, config: ImageCacheConfig(
            maxMemoryCost: memoryLimit, shouldUseWeakMemoryCache: false, maxDiskSize: diskLimit, diskSweepInterval: .seconds(1)))
        let downloader = Downloader(config: DownloaderConfig(maxConcurrentDownloads: 6))
        let manager = WebImageManager(cache: cache, loader: downloader)
        let urls = (0..<urlCount).map { index in
            URL(string: index % 2 == 0 ? "http://127.0.0.1:8089/files/\(index).jpg" : "http://127.0.0.1:8089/soak/\(index).png")!
        }
        var random = SoakRandom(seed: 2026)
        var plan: [(url: URL, thumbnail: Int?, cancelAfter: Duration?)] = []
        for index in 0..<loadCount {
            let repeatsRecent = index > 0 && random.next() % 2 == 0
            let url = repeatsRecent ? plan[max(0, index - 1 - Int(random.next() % 20))].url : urls[Int(random.next() % UInt64(urlCount))]
            let thumbnail = random.next() % 10 < 3 ? [32, 64, 128, 200][Int(random.next() % 4)] : nil
            let cancelAfter: Duration? = random.next() % 10 == 0 ? .microseconds(Int64(random.next() % 5_000)) : nil
            plan.append((url, thumbnail, cancelAfter))
        }

        var outcome = Outcome()
        outcome.baselineRSS = residentMegabytes()
        let requestsBefore = try await nginxRequests()
        let start = ContinuousClock.now
        let monitor = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, await cache.diskCache?.totalSize() ?? 0)
                try? await Task.sleep(for: .milliseconds(20))
            }
            return max(peak, await cache.diskCache?.totalSize() ?? 0)
        }
        let watchdog = Task {
            try await Task.sleep(for: deadline)
            FileHandle.standardError.write(Data("soak: not finished after \(deadline): a load hangs\n".utf8))
            exit(3)
        }
        let results = await withTaskGroup(of: Result<ImageCacheType, any Error>.self) { group in
            var next = 0
            var results: [Result<ImageCacheType, any Error>] = []
            func addNext() {
                guard next < plan.count else { return }
                let step = plan[next]
                next += 1
                group.addTask {
                    let context = WebImageContext(thumbnailPixelSize: step.thumbnail.map { PixelSize(width: $0, height: $0) })
                    let load = Task { try await manager.loadImage(url: step.url, context: context).cacheType }
                    if let delay = step.cancelAfter {
                        try? await Task.sleep(for: delay)
                        load.cancel()
                    }
                    return await load.result
                }
            }
            for _ in 0..<32 { addNext() }
            while let result = await group.next() {
                results.append(result)
                addNext()
            }
            return results
        }
        watchdog.cancel()
        monitor.cancel()
        outcome.seconds = Measure.milliseconds(ContinuousClock.now - start) / 1000
        outcome.peakDiskBytes = await monitor.value
        outcome.requests = try await nginxRequests() - requestsBefore - 1   // the second status request counts itself
        for result in results {
            switch result {
            case .success(let type):
                outcome.succeeded += 1
                if type == .none { outcome.notFromCache += 1 }
            case .failure(let error):
                if error is CancellationError || Self.isCancellation(error) {
                    outcome.cancelled += 1
                } else {
                    outcome.failed += 1
                    if outcome.firstFailure == nil { outcome.firstFailure = "\(error)" }
                }
            }
        }
        outcome.downloads = manager.statistics.downloads
        outcome.networkTasks = downloader.startedDownloadCount
        outcome.peakRSS = ManagerBenchmarks.peakRSSMegabytes()
        let json = try JSONEncoder().encode(outcome)
        print(String(decoding: json, as: UTF8.self))
    }

    static func isCancellation(_ error: any Error) -> Bool {
        if case .cancelled = error as? WebImageError { return true }
        return false
    }

    /// nginx's count of requests served so far (stub_status: "server accepts handled requests").
    static func nginxRequests() async throws -> Int {
        let (data, _) = try await URLSession.shared.data(from: statusURL)
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
        guard lines.count >= 3, let requests = lines[2].split(separator: " ").compactMap({ Int($0) }).last else {
            throw BenchError("cannot read nginx's /status: \(String(decoding: data, as: UTF8.self))")
        }
        return requests
    }

    /// VmRSS from /proc/self/status, in MB.
    static func residentMegabytes() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kilobytes = line.split(separator: " ").compactMap({ Double($0) }).first else { return 0 }
        return kilobytes / 1024
    }
}

/// A small seeded generator (SplitMix64), so every soak run makes the same plan.
struct SoakRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
