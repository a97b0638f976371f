import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import WebImage

/// Download benchmarks against nginx on 127.0.0.1 (Benchmarks/nginx/serve.sh start): the Downloader
/// next to bare URLSession `data(for:)` at the same concurrency, and curl --parallel.
enum DownloadBenchmarks {
    static let base = "http://127.0.0.1:8089/files/"

    static func run(iterations: Int) async throws -> [Row] {
        guard (try? await URLSession.shared.data(from: URL(string: base + "0.jpg")!)) != nil else {
            return [Row(name: "downloads", ours: 0, reference: "nginx on 127.0.0.1:8089", referenceValue: nil,
                        note: "run Benchmarks/nginx/serve.sh start (apt-get install nginx)")]
        }
        let rounds = max(5, iterations / 2)
        let small = (0..<1000).map { URL(string: base + "\($0).jpg")! }
        let bytesEach = 19_147
        var rows: [Row] = []

        // Alternate ours and the reference round by round, so drift in the machine hits both alike.
        let (ours, bare) = try await interleaved(rounds) {
            let downloader = Downloader(config: DownloaderConfig(maxConcurrentDownloads: 6))
            try await withThrowingTaskGroup(of: Int.self) { group in
                for url in small { group.addTask { try await downloader.load(ImageLoadRequest(url: url)).data.count } }
                var total = 0
                for try await count in group { total += count }
                if total != bytesEach * small.count { throw BenchError("short download: \(total) bytes") }
            }
        } reference: {
            try await bareURLSession(small, inFlight: 6, expected: bytesEach * small.count)
        }
        // The same harness for both: six callers at a time, each taking the next URL when it finishes.
        let (oursWindowed, bareWindowed) = try await interleaved(rounds) {
            let downloader = Downloader(config: DownloaderConfig(maxConcurrentDownloads: 6))
            try await windowed(small, inFlight: 6, expected: bytesEach * small.count) { url in
                try await downloader.load(ImageLoadRequest(url: url)).data.count
            }
        } reference: {
            try await bareURLSession(small, inFlight: 6, expected: bytesEach * small.count)
        }
        let curl = try curlTime(small, parallel: 6, rounds: rounds)
        func perSecond(_ ms: Double) -> String { String(format: "%.0f req/s, %.0f MB/s", 1000 / ms * 1000, Double(bytesEach) * 1000 / ms / 1000) }
        rows.append(Row(name: "1000 x 19 KB, all queued in the Downloader (\(perSecond(ours)))", ours: ours, reference: "URLSession data(for:), same headers, 6 at a time (\(perSecond(bare)))",
                        referenceValue: bare, goal: 0.9))
        rows.append(Row(name: "1000 x 19 KB, 6 callers at a time (\(perSecond(oursWindowed)))", ours: oursWindowed,
                        reference: "URLSession data(for:), same harness (\(perSecond(bareWindowed)))", referenceValue: bareWindowed, goal: 0.9))
        rows.append(Row(name: "1000 x 19 KB, 6 in flight", ours: ours, reference: "curl --parallel-max 6 (\(curl.map(perSecond) ?? "-"))",
                        referenceValue: curl, note: "curl is missing"))

        let big = [URL(string: base + "big.bin")!]
        let (oursBig, bareBig) = try await interleaved(rounds) {
            let downloader = Downloader(config: DownloaderConfig(maxResponseBytes: 200 << 20))
            _ = try await downloader.load(ImageLoadRequest(url: big[0]))
        } reference: {
            try await bareURLSession(big, inFlight: 1, expected: 100_000_000)
        }
        let curlBig = try curlTime(big, parallel: 1, rounds: rounds)
        func megabytes(_ ms: Double) -> String { String(format: "%.0f MB/s", 100_000 / ms) }
        rows.append(Row(name: "one 100 MB file (\(megabytes(oursBig)))", ours: oursBig, reference: "URLSession data(for:) (\(megabytes(bareBig)))",
                        referenceValue: bareBig, goal: 0.9))
        rows.append(Row(name: "one 100 MB file", ours: oursBig, reference: "curl (\(curlBig.map(megabytes) ?? "-"))",
                        referenceValue: curlBig, note: "curl is missing"))
        return rows
    }

    static func bareURLSession(_ urls: [URL], inFlight: Int, expected: Int) async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.httpMaximumConnectionsPerHost = inFlight
        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        try await windowed(urls, inFlight: inFlight, expected: expected) { url in
            try await session.data(for: sameRequest(as: url)).0.count
        }
    }

    /// The request the Downloader sends for `url`: the same two header fields (its defaults), so
    /// the server does the same work for both sides.
    static func sameRequest(as url: URL) -> URLRequest {
        var request = URLRequest(url: url)
        for (field, value) in DownloaderConfig().httpHeaders { request.setValue(value, forHTTPHeaderField: field) }
        return request
    }

    /// Loads `urls` with `inFlight` callers at a time, each starting the next URL when it finishes.
    static func windowed(_ urls: [URL], inFlight: Int, expected: Int,
                         _ load: @escaping @Sendable (URL) async throws -> Int) async throws {
        try await withThrowingTaskGroup(of: Int.self) { group in
            var next = 0
            var total = 0
            while next < min(inFlight, urls.count) {
                let url = urls[next]
                group.addTask { try await load(url) }
                next += 1
            }
            while let count = try await group.next() {
                total += count
                if next < urls.count {
                    let url = urls[next]
                    group.addTask { try await load(url) }
                    next += 1
                }
            }
            if total != expected { throw BenchError("short download: \(total) bytes") }
        }
    }

    static func curlTime(_ urls: [URL], parallel: Int, rounds: Int) throws -> Double? {
        guard let curl = Measure.which("curl") else { return nil }
        let list = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-curl-\(getpid()).txt")
        try urls.map { "url = \"\($0.absoluteString)\"\noutput = \"/dev/null\"" }.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: list) }
        return try Measure.process(curl, ["-s", "--parallel", "--parallel-max", String(parallel), "-K", list.path], iterations: rounds)
    }

    /// Runs `ours` and `reference` alternately, once untimed each, then `rounds` times each; returns the medians.
    static func interleaved(_ rounds: Int, _ ours: () async throws -> Void,
                            reference: () async throws -> Void) async throws -> (Double, Double) {
        try await ours()
        try await reference()
        var oursTimes: [Double] = []
        var referenceTimes: [Double] = []
        for _ in 0..<rounds {
            var start = ContinuousClock.now
            try await ours()
            oursTimes.append(Measure.milliseconds(ContinuousClock.now - start))
            start = .now
            try await reference()
            referenceTimes.append(Measure.milliseconds(ContinuousClock.now - start))
        }
        return (oursTimes.sorted()[rounds / 2], referenceTimes.sorted()[rounds / 2])
    }
}
