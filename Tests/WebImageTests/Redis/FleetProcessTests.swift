import Foundation
import Testing
@testable import webimage
@testable import WebImage
@testable import WebImageRedis

/// `webimage fetch --redis`: separate processes sharing one Redis.
@Suite struct FleetProcessTests {
    @Test func theRedisOptionsAreParsedByFetchAndServe() throws {
        guard case .success(let fetch) = FetchCommand.parse(["--redis", "redis://:pw@cache:6380/2", "--redis", "redis://other",
                                                             "--redis-namespace", "shop", "--redis-timeout", "900", "--redis-fill-wait", "30",
                                                             "https://example.com/a.png"]) else {
            Issue.record("fetch refused the Redis options"); return
        }
        #expect(fetch.redis.endpoints == [RedisEndpoint(host: "cache", port: 6380, password: "pw", database: 2), RedisEndpoint(host: "other")])
        #expect(fetch.redis.namespace == "shop" && fetch.urls == ["https://example.com/a.png"])
        #expect(fetch.redis.timeout == .milliseconds(900) && fetch.redis.fillWait == .seconds(30))
        #expect(fetch.makeManager().cache is RedisImageCache)
        guard case .success(let serve) = ServeCommand.parse(["--unsigned", "--redis", "redis://127.0.0.1:7000"]) else {
            Issue.record("serve refused --redis"); return
        }
        #expect(serve.redis.endpoints == [RedisEndpoint(host: "127.0.0.1", port: 7000)])
        for bad in [["--redis", "http://x", "u"], ["--redis"], ["--redis-namespace", "", "u"]] {
            guard case .failure(let message) = FetchCommand.parse(bad) else { Issue.record("accepted \(bad)"); continue }
            #expect(message.contains("--redis"))
        }
    }

    @Test func fourProcessesFetchingTheSameHundredURLsAtOnceGetThemFromTheOriginOnce() async throws {
        let redis = try await RedisServerProcess()
        let origin = try TestHTTPServer()
        let picture = try encodedPicture(width: 24, height: 16)
        var response = TestResponse(headers: [("Content-Type", "image/png")], body: picture)
        response.delayBeforeHeaders = .milliseconds(30)
        for index in 0..<100 { origin.route("/fleet/\(index).png", response) }
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let urls = (0..<100).map { origin.url("/fleet/\($0).png").absoluteString }
        var processes: [(SpawnedProcess, URL)] = []
        for index in 0..<4 {
            let output = directory.url.appendingPathComponent("out-\(index).tsv")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = SpawnedProcess()
            process.executableURL = ChildProcess.tool
            // A claim must outlive the slowest process's fetch, and a command its slowest reply, however
            // slow the machine (ThreadSanitizer makes every process several times slower): otherwise a
            // claim expires, another process fetches too, and the test would prove nothing about the tier.
            let fillWait = Int(60 * testTimeScale), timeout = Int(2000 * testTimeScale)
            process.arguments = ["fetch", "--redis", "redis://127.0.0.1:\(redis.port)", "--redis-namespace", "fleet-test",
                                 "--redis-fill-wait", "\(fillWait)", "--redis-timeout", "\(timeout)",
                                 "--cache-dir", directory.url.appendingPathComponent("cache-\(index)").path] + urls
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = FileHandle.nullDevice
            processes.append((process, output))
        }
        for (process, _) in processes { try process.run() }
        for (process, output) in processes {
            while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
            let lines = try String(contentsOf: output, encoding: .utf8).split(separator: "\n")
            #expect(process.terminationStatus == 0 && lines.count == 100, "\(lines.filter { $0.contains("\terror\t") }.prefix(3))")
            #expect(lines.allSatisfy { $0.split(separator: "\t")[2] == "24" }, "every image, whole")
        }
        let counts = (0..<100).map { origin.requestCount(for: "/fleet/\($0).png") }
        #expect(counts.allSatisfy { $0 == 1 }, "each URL once from the origin: \(counts.filter { $0 != 1 }.count) were not")
        #expect(origin.totalRequestCount == 100)
    }
}
