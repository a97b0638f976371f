import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
@testable import webimage

/// What a container needs of the tool beside the server: `webimage serve --help` (and `webimage
/// help serve`) naming every flag the parser takes, and `webimage health`, whose exit status is the
/// health check. Run as the built tool, in child processes.
@Suite struct ServeHelpTests {
    /// Every `--flag` `webimage serve` parses (read from the parsers' sources, so a new flag without
    /// a line in the help fails here).
    static func parsedFlags() throws -> Set<String> {
        let files = ["ServeCommand.swift", "RedisArguments.swift", "S3Arguments.swift"]
        var flags: Set<String> = []
        for file in files {
            let text = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("Sources/webimage/\(file)"), encoding: .utf8)
            let regex = try Regex(#"case "(--[a-z0-9-]+)""#)
            for match in text.matches(of: regex) { if let flag = match.output[1].substring { flags.insert(String(flag)) } }
        }
        return flags
    }

    @Test func serveHelpNamesEveryFlagAndExitsZero() async throws {
        let flags = try Self.parsedFlags()
        #expect(flags.count > 25 && flags.contains("--bind") && flags.contains("--redis") && flags.contains("--s3-bucket"))
        for arguments in [["serve", "--help"], ["serve", "-h"], ["help", "serve"]] {
            let outcome = try await ChildProcess.run(arguments)
            #expect(outcome.exitedCleanly, "\(arguments)")
            let missing = flags.filter { !outcome.outputText.contains($0) }
            #expect(missing.isEmpty, "\(arguments) does not name \(missing.sorted())")
            #expect(outcome.outputText.hasPrefix("usage: webimage serve"), "\(arguments)")
            #expect(outcome.outputText.contains("webimage health"))
            let unnamed = ImgproxyEnvironment.honouredNames.filter { !outcome.outputText.contains($0) }
            #expect(unnamed.isEmpty, "\(arguments) does not name \(unnamed)")
        }
    }

    @Test func healthExitsZeroOnlyWhenTheServerAnswers200() async throws {
        let fixture = try await ServerFixture()
        let healthy = try await ChildProcess.run(["health", "\(fixture.base)/health"])
        #expect(healthy.exitedCleanly, "\(healthy.errorText)")
        let notFound = try await ChildProcess.run(["health", "\(fixture.base)/no-such-page"])
        #expect(notFound.status == 1 && notFound.errorText.contains("answered 4"), "\(notFound.errorText)")
        await fixture.stop()
        let closed = try ClosedLoopbackPort()
        let refused = try await ChildProcess.run(["health", "http://127.0.0.1:\(closed.port)/health"])
        #expect(refused.status == 1, "\(refused.errorText)")
        let bad = try await ChildProcess.run(["health", "ftp://x/"])
        #expect(bad.status == 2)
    }

    @Test func healthFindsThePortInTheEnvironment() {
        #expect(HealthCommand.defaultPort(["IMGPROXY_BIND": ":9090"]) == 9090)
        #expect(HealthCommand.defaultPort(["IMGPROXY_BIND": "0.0.0.0:7000", "PORT": "1"]) == 7000)
        #expect(HealthCommand.defaultPort(["PORT": "5000"]) == 5000)
        #expect(HealthCommand.defaultPort([:]) == 8080)
    }
}
