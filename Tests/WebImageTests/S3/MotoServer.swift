import Foundation
@testable import WebImageS3

/// A real S3-compatible server on 127.0.0.1: moto's server (PyPI `moto[server]`; `.ci/run`
/// installs it into a venv when missing, the README names it), one per test run, started on first
/// use. It runs under a small Python driver that stops it when its standard input closes, so it
/// never outlives the test process. Each test makes a bucket of its own (``freshBucket(_:)``).
///
/// The Python is `$WEBIMAGE_MOTO_PYTHON`, else the venv `.ci/run` makes
/// (`~/.cache/webimage-moto-venv/bin/python`), else `python3` on `PATH`: the first that imports moto's server.
final class MotoServer: Sendable {
    let port: Int
    private let process: SpawnedProcess
    private let input: Pipe

    static let shared: Result<MotoServer, FixtureError> = {
        do { return .success(try MotoServer()) } catch let error as FixtureError { return .failure(error) } catch {
            return .failure(FixtureError("\(error)"))
        }
    }()

    /// The running server, or why there is none.
    static func running() throws -> MotoServer { try shared.get() }

    static var python: String? {
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        let candidates = [environment["WEBIMAGE_MOTO_PYTHON"], home + "/.cache/webimage-moto-venv/bin/python"].compactMap { $0 }
            + (environment["PATH"] ?? "/usr/bin").split(separator: ":").map { "\($0)/python3" }
        return candidates.first { path in
            guard FileManager.default.isExecutableFile(atPath: path) else { return false }
            let probe = SpawnedProcess()
            probe.executableURL = URL(fileURLWithPath: path)
            probe.arguments = ["-c", "import moto.server"]
            probe.standardOutput = FileHandle.nullDevice
            probe.standardError = FileHandle.nullDevice
            guard (try? probe.run()) != nil else { return false }
            probe.waitUntilExit()
            return probe.terminationStatus == 0
        }
    }

    private init() throws {
        guard let python = Self.python else {
            throw FixtureError("no Python with moto's server: pip install 'moto[server]' (bash .ci/run installs it into ~/.cache/webimage-moto-venv)")
        }
        port = try freeLoopbackPort()
        let driver = """
        import sys
        from moto.server import ThreadedMotoServer
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=\(port), verbose=False)
        server.start()
        sys.stdin.read()
        server.stop()
        """
        process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", driver]
        input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let data = try? Data(contentsOf: URL(string: "http://127.0.0.1:\(port)/")!), !data.isEmpty { return }
            usleep(50_000)
        }
        throw FixtureError("moto's server did not answer on port \(port) within 60 s")
    }

    var endpoint: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A client of this server with test credentials (moto accepts any).
    func clientConfig(timeout: Duration = .seconds(5), retries: Int = 2, breakerThreshold: Int = 3,
                      breakerCooldown: Duration = .seconds(5)) throws -> S3ClientConfig {
        try S3ClientConfig(region: "us-east-1", endpoint: endpoint, credentials: S3Credentials(accessKeyID: "test", secretAccessKey: "test"),
                           timeout: timeout, retries: retries, retryBaseDelay: .milliseconds(10), breakerThreshold: breakerThreshold,
                           breakerCooldown: breakerCooldown)
    }

    /// A new bucket named after `name` and a random suffix.
    func freshBucket(_ name: String) async throws -> String {
        let bucket = "\(name.lowercased().filter { $0.isLetter || $0.isNumber }.prefix(30))-\(UInt32.random(in: 0...UInt32.max))"
        try await S3Client(config: clientConfig()).createBucket(bucket)
        return bucket
    }
}
