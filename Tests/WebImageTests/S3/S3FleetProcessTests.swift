import Foundation
import Testing
@testable import webimage
@testable import WebImage
@testable import WebImageS3

/// `webimage fetch --s3-bucket`: separate processes with separate disks sharing one bucket (moto),
/// with and without Redis in front.
@Suite struct S3FleetProcessTests {
    @Test func theS3OptionsAreParsedByFetchAndServe() throws {
        guard case .success(let fetch) = FetchCommand.parse(["--s3-endpoint", "http://127.0.0.1:9000", "--s3-region", "eu-west-1",
                                                             "--s3-bucket", "images", "--s3-namespace", "shop", "s3://images/a.png"]) else {
            Issue.record("fetch refused the S3 options"); return
        }
        #expect(fetch.s3.endpoint?.absoluteString == "http://127.0.0.1:9000" && fetch.s3.region == "eu-west-1")
        #expect(fetch.s3.bucket == "images" && fetch.s3.namespace == "shop")
        let manager = fetch.makeManager()
        let cache = try #require(manager.cache as? S3ImageCache)
        #expect(cache.store.config.prefix == "webimage/v1/shop/" && cache.store.config.client.addressing == .pathStyle)
        #expect(manager.loader.canLoad(URL(string: "s3://images/a.png")!))
        guard case .success(let serve) = ServeCommand.parse(["--unsigned", "--s3-bucket", "b", "--s3-endpoint", "https://minio.example"]) else {
            Issue.record("serve refused the S3 options"); return
        }
        #expect(serve.s3.bucket == "b")
        for bad in [["--s3-endpoint", "ftp://x", "u"], ["--s3-bucket"], ["--s3-bucket", "a/b", "u"], ["--s3-namespace", "a b", "--s3-bucket", "x", "u"],
                    ["--s3-region", "", "u"]] {
            guard case .failure = FetchCommand.parse(bad) else { Issue.record("accepted \(bad)"); continue }
        }
    }

    func run(_ arguments: [String], output: URL) throws -> SpawnedProcess {
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = SpawnedProcess()
        process.executableURL = ChildProcess.tool
        process.arguments = ["fetch"] + arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        var environment = ProcessInfo.processInfo.environment
        (environment["AWS_ACCESS_KEY_ID"], environment["AWS_SECRET_ACCESS_KEY"]) = ("test", "test")
        process.environment = environment
        try process.run()
        return process
    }

    func finish(_ process: SpawnedProcess, _ output: URL) async throws -> [[String]] {
        while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
        #expect(process.terminationStatus == 0)
        return try String(contentsOf: output, encoding: .utf8).split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
    }

    /// Two processes with their own disks, one after the other: the second gets every image from the
    /// bucket, and the origin serves each URL once.
    @Test func aSecondProcessWithItsOwnDiskGetsEverythingFromTheBucket() async throws {
        let moto = try MotoServer.running()
        let bucket = try await moto.freshBucket("fleet")
        let origin = try TestHTTPServer()
        let picture = try encodedPicture(width: 24, height: 16)
        for index in 0..<10 { origin.route("/s3fleet/\(index).png", TestResponse(headers: [("Content-Type", "image/png")], body: picture)) }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let urls = (0..<10).map { origin.url("/s3fleet/\($0).png").absoluteString }
        let store = ["--s3-endpoint", moto.endpoint.absoluteString, "--s3-bucket", bucket, "--s3-namespace", "fleet"]
        for (index, tier) in ["none", "disk"].enumerated() {
            let output = directory.url.appendingPathComponent("out-\(index).tsv")
            let process = try run(store + ["--cache-dir", directory.url.appendingPathComponent("cache-\(index)").path] + urls, output: output)
            let lines = try await finish(process, output)
            #expect(lines.count == 10 && lines.allSatisfy { $0[1] == tier && $0[2] == "24" }, "process \(index): \(lines.prefix(2))")
        }
        #expect((0..<10).allSatisfy { origin.requestCount(for: "/s3fleet/\($0).png") == 1 })
    }

    /// Two processes at once with Redis in front: one of them fetches each URL and fills the bucket
    /// (the fleet's single flight); a third process without Redis then finds all of it in the bucket.
    @Test func withRedisOneProcessOfTheFleetFillsTheBucket() async throws {
        let moto = try MotoServer.running()
        let redis = try await RedisServerProcess()
        let bucket = try await moto.freshBucket("fleetredis")
        let origin = try TestHTTPServer()
        var response = TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture(width: 24, height: 16))
        response.delayBeforeHeaders = .milliseconds(30)
        for index in 0..<20 { origin.route("/s3redis/\(index).png", response) }
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let urls = (0..<20).map { origin.url("/s3redis/\($0).png").absoluteString }
        let store = ["--s3-endpoint", moto.endpoint.absoluteString, "--s3-bucket", bucket]
        let fillWait = Int(60 * testTimeScale), timeout = Int(2000 * testTimeScale)
        let shared = ["--redis", "redis://127.0.0.1:\(redis.port)", "--redis-fill-wait", "\(fillWait)", "--redis-timeout", "\(timeout)"] + store
        let runs = try (0..<2).map { index in
            let output = directory.url.appendingPathComponent("fleet-\(index).tsv")
            return (try run(shared + ["--cache-dir", directory.url.appendingPathComponent("fleet-cache-\(index)").path] + urls, output: output), output)
        }
        for (process, output) in runs {
            let lines = try await finish(process, output)
            #expect(lines.count == 20 && lines.allSatisfy { $0[2] == "24" })
        }
        #expect((0..<20).allSatisfy { origin.requestCount(for: "/s3redis/\($0).png") == 1 }, "each URL once from the origin")
        let output = directory.url.appendingPathComponent("late.tsv")
        let late = try run(store + ["--cache-dir", directory.url.appendingPathComponent("late-cache").path] + urls, output: output)
        let lines = try await finish(late, output)
        #expect(lines.count == 20 && lines.allSatisfy { $0[1] == "disk" }, "the bucket has every image: \(lines.prefix(2))")
        #expect(origin.totalRequestCount == 20)
    }
}
