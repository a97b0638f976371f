import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
@testable import webimage

/// What a container needs of the tool beside the server: `webimage serve --help` (and `webimage
/// help serve`) naming every flag the parser takes, and `webimage health`, whose exit status is the
/// health check. Run as the built tool, in child processes.
@Suite struct ServeHelpTests {
    /// Every command's help is made from the flags it parses (``CommandOptions``): `webimage COMMAND --help`,
    /// `-h` and `webimage help COMMAND` exit 0 and name every declared flag with its value and default.
    @Test func everyCommandsHelpNamesEveryFlagItParsesWithItsDefault() async throws {
        let declared: [(String, [(name: String, value: String?, defaultValue: String?)])] = [
            ("decode", DecodeCommand.options.options.map { ($0.name, $0.value, $0.defaultValue) }),
            ("fetch", FetchCommand.options.options.map { ($0.name, $0.value, $0.defaultValue) }),
            ("info", InfoCommand.options.options.map { ($0.name, $0.value, $0.defaultValue) }),
            ("serve", ServeCommand.options.options.map { ($0.name, $0.value, $0.defaultValue) }),
            ("cache", CacheCommand.options.options.map { ($0.name, $0.value, $0.defaultValue) }),
        ]
        let serveFlags = Set(declared[3].1.map(\.name))
        #expect(serveFlags.count > 30 && serveFlags.isSuperset(of: ["--bind", "--redis", "--s3-bucket", "--preset", "--auto-format"]))
        for (command, flags) in declared {
            for arguments in [[command, "--help"], [command, "-h"], ["help", command]] {
                let outcome = try await ChildProcess.run(arguments)
                #expect(outcome.exitedCleanly && outcome.outputText.hasPrefix("usage: webimage \(command)"), "\(arguments)")
                let text = outcome.outputText.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                for flag in flags {
                    #expect(text.contains(flag.name + (flag.value.map { " " + $0 } ?? "")), "\(arguments) does not name \(flag.name)")
                    if let value = flag.defaultValue {
                        let words = value.split(whereSeparator: \.isWhitespace).joined(separator: " ")
                        #expect(text.contains("(default \(words))"), "\(arguments): \(flag.name)'s default")
                    }
                }
            }
        }
        let serve = try await ChildProcess.run(["serve", "--help"])
        let unnamed = ImgproxyEnvironment.honouredNames.filter { !serve.outputText.contains($0) }
        #expect(unnamed.isEmpty, "serve --help does not name \(unnamed)")
        let all = try await ChildProcess.run(["help"])
        #expect(all.exitedCleanly && ["decode", "fetch", "info", "serve", "cache", "health", "formats"].allSatisfy {
            all.outputText.contains("usage: webimage \($0)")
        } && all.outputText.contains("SPEC (for --transform)"))
        let unknown = try await ChildProcess.run(["serve", "--no-such-flag"])
        #expect(unknown.status == 2 && unknown.errorText.contains("unknown option --no-such-flag"))
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
