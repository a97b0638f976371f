import Foundation
import WebImage
import WebImageS3

/// The object-store tier (`bench s3`), against moto's S3 server this group starts on a free port
/// (PyPI `moto[server]`: `bash scripts/moto-venv.sh`):
///
/// - **A hit from the store through the manager**: `loadVariant` of a ~20 KB JPEG whose only copy
///   is in the bucket (no memory or disk tier: one signed GET per call), ×200, next to the same 200
///   GETs signed by curl (`--aws-sigv4`, one keep-alive connection) — goal ≥ 0.8×.
/// - **The tier's cost on a cold load**: 200 distinct cold loads from nginx (`/files/`), one after
///   another, with the tier (a PUT in the background each, competing for the same 2 cores with
///   moto) and without, interleaved; the PUTs finish after the clock — goal: within noise.
enum ObjectStoreBenchmarks {
    static func run(iterations: Int) async throws -> [Row] {
        let environment = ProcessInfo.processInfo.environment
        let pythons = [environment["WEBIMAGE_MOTO_PYTHON"], (environment["HOME"] ?? "/root") + "/.cache/webimage-moto-venv/bin/python",
                       Measure.which("python3")].compactMap { $0 }
        guard let python = pythons.first(where: { (try? Measure.run($0, ["-c", "import moto.server"]))?.status == 0 }),
              let curl = Measure.which("curl") else {
            return [Row(name: "object store benchmarks", ours: 0, reference: "curl --aws-sigv4", referenceValue: nil, goal: nil,
                        note: "bash scripts/moto-venv.sh and apt-get install curl")]
        }
        let port = try RedisBenchmarks.freePort()
        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = ["-c", "import sys\nfrom moto.server import ThreadedMotoServer\ns = ThreadedMotoServer(ip_address='127.0.0.1', port=\(port))\n"
                            + "s.start()\nsys.stdin.read()\ns.stop()"]
        let input = Pipe()
        server.standardInput = input
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        let credentials = S3Credentials(accessKeyID: "bench", secretAccessKey: "bench")
        let clientConfig = try S3ClientConfig(region: "us-east-1", endpoint: URL(string: "http://127.0.0.1:\(port)")!, credentials: credentials)
        let client = S3Client(config: clientConfig)
        var ready = false
        for _ in 0..<600 where !ready {
            ready = (try? await client.createBucket("bench")) != nil
            if !ready { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard ready else { throw BenchError("moto's server did not start") }
        let tier = S3Tier(config: try S3TierConfig(client: clientConfig, bucket: "bench", namespace: "bench", sweepInterval: nil))
        return [try await hit(tier: tier, curl: curl, port: port, iterations: iterations),
                try await coldCost(tier: tier, iterations: iterations)]
    }

    private static func hit(tier: S3Tier, curl: String, port: Int, iterations: Int) async throws -> Row {
        let source = try Data(contentsOf: packageRoot.appendingPathComponent("Samples/mandelbrot.jpg"))
        let image = try CoderRegistry.shared.decode(source)
        let bytes = try CoderRegistry.shared.encode(image, as: .jpeg, options: EncodeOptions(compressionQuality: 0.9))
        let local = ImageCache(directory: URL(fileURLWithPath: "/dev/null/no-disk-tier"),
                               config: ImageCacheConfig(shouldCacheImagesInMemory: false, diskSweepInterval: nil))
        let manager = WebImageManager(cache: S3ImageCache(inner: local, store: tier), config: WebImageManagerConfig(maxVariantMemoryCost: 0))
        let url = URL(string: "https://bench.invalid/photo.jpg")!
        guard let key = manager.variantCacheKey(for: url, format: .exactly(.jpeg)) else { throw BenchError("no variant key") }
        guard await tier.setValue(bytes, metadata: DiskCacheMetadata(entityTag: ImageVariant.entityTag(of: bytes), pixelSize: image.size),
                                  forKey: key) else { throw BenchError("PUT failed") }
        let first = try await manager.loadVariant(url: url, format: .exactly(.jpeg))
        guard first.data == bytes, first.cacheSource?.isSharedTier == true else { throw BenchError("not a store hit") }
        let count = 200
        let objectURL = "http://127.0.0.1:\(port)/bench/\(tier.objectKey(forKey: key))"
        let arguments = ["-s", "--fail", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "bench:bench"]
            + Array(repeating: ["-o", "/dev/null", objectURL], count: count).flatMap { $0 }
        var failed = false
        let times = try await RedisBenchmarks.interleavedAsync(iterations: max(3, iterations / 3)) {
            for _ in 0..<count { _ = try await manager.loadVariant(url: url, format: .exactly(.jpeg)) }
        } reference: {
            if try Measure.run(curl, arguments).status != 0 { failed = true }
        }
        guard !failed else { throw BenchError("curl's signed GETs failed") }
        return Row(name: "object-store hit via loadVariant, \(bytes.count / 1000) KB JPEG x\(count) (moto)", ours: times.ours,
                   reference: "curl --aws-sigv4, the same \(count) GETs on one connection", referenceValue: times.reference, goal: 0.8)
    }

    private static func coldCost(tier: S3Tier, iterations: Int) async throws -> Row {
        let count = 200
        var round = 0
        /// The loads' milliseconds; the PUTs they started finish in the shutdown, after the clock.
        func loads(withTier: Bool) async throws -> Double {
            round += 1
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("webimage-bench-s3-\(getpid())-\(round)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let local = ImageCache(directory: directory, config: ImageCacheConfig(diskSweepInterval: nil))
            let cache: any ImageCaching = withTier ? S3ImageCache(inner: local, store: tier) : local
            let manager = WebImageManager(cache: cache, loader: Downloader())
            let started = ContinuousClock.now
            for index in 0..<count {
                _ = try await manager.loadImage(url: URL(string: "http://127.0.0.1:8089/files/\(index % 1000).jpg?round=\(round)-\(index)")!)
            }
            let elapsed = Measure.milliseconds(ContinuousClock.now - started)
            await manager.shutdown()   // the PUTs finish here, after the clock
            return elapsed
        }
        var with: [Double] = [], without: [Double] = []
        for _ in 0..<max(3, iterations / 3) {
            with.append(try await loads(withTier: true))
            without.append(try await loads(withTier: false))
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        return Row(name: "\(count) cold loads from nginx with the object-store tier (a PUT each, in the background)", ours: median(with),
                   reference: "the same loads without the tier", referenceValue: median(without), goal: nil)
    }
}
