import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage
@testable import WebImageServer
@testable import webimage

/// `webimage serve` configured as imgproxy is, by `IMGPROXY_*` environment variables with imgproxy's
/// names and value syntax: honoured names applied, flags winning, bad values refused by name, other
/// names reported as ignored; and a deployment's environment alone starting a server that checks
/// imgproxy's rotated key pairs.
@Suite struct ImgproxyEnvironmentTests {
    struct Refused: Error {
        let message: String
    }

    func parsed(_ arguments: [String] = [], _ environment: [String: String]) throws -> ServeCommand {
        switch ServeCommand.parse(arguments, environment: environment) {
        case .success(let command): return command
        case .failure(let message): throw Refused(message: message)
        }
    }

    func refusal(_ arguments: [String] = [], _ environment: [String: String]) -> String? {
        if case .failure(let message) = ServeCommand.parse(arguments, environment: environment) { return message }
        return nil
    }

    @Test func honouredNamesAreApplied() throws {
        let command = try parsed(["--unsigned"], [
            "IMGPROXY_BIND": ":9000", "IMGPROXY_WORKERS": "3", "IMGPROXY_REQUESTS_QUEUE_SIZE": "10", "IMGPROXY_TTL": "60",
            "IMGPROXY_ALLOW_SECURITY_OPTIONS": "true", "IMGPROXY_AUTO_WEBP": "1", "IMGPROXY_DOWNLOAD_TIMEOUT": "7",
            "IMGPROXY_MAX_SRC_FILE_SIZE": "1048576", "IMGPROXY_MAX_REDIRECTS": "2", "IMGPROXY_USER_AGENT": "imgproxy-compatible",
            "IMGPROXY_PRESETS": "default=q:70,thumb=rs:fill:100:100", "IMGPROXY_LOCAL_FILESYSTEM_ROOT": "/srv/images",
        ])
        #expect(command.bind == "0.0.0.0" && command.port == 9000)
        #expect(command.maxInFlight == 3 && command.queue == 10 && command.cacheMaxAge == 60)
        #expect(command.allowsSecurityOptions && command.negotiatesFormats)
        #expect(command.downloadTimeout == .seconds(7) && command.maxSourceBytes == 1 << 20 && command.maxRedirects == 2)
        #expect(command.userAgent == "imgproxy-compatible" && command.localRoot?.path == "/srv/images")
        #expect(command.presets["default"] == ["q:70"] && command.presets["thumb"] == ["rs:fill:100:100"])
        #expect(command.ignoredEnvironment.isEmpty)
        #expect(try parsed(["--unsigned"], ["IMGPROXY_BIND": "[::1]:8081"]).bind == "::1")
        #expect(try parsed(["--unsigned"], ["PORT": "5000"]).port == 5000)
        #expect(try parsed(["--unsigned"], ["PORT": "5000", "IMGPROXY_BIND": "127.0.0.1:6000"]).port == 6000, "IMGPROXY_BIND wins over PORT")
    }

    @Test func flagsWinOverTheEnvironment() throws {
        let environment = ["IMGPROXY_BIND": ":9000", "IMGPROXY_KEY": "aa", "IMGPROXY_SALT": "bb", "IMGPROXY_WORKERS": "3"]
        let command = try parsed(["--port", "7000", "--max-inflight", "5"], environment)
        #expect(command.port == 7000 && command.maxInFlight == 5 && command.environmentKeys.count == 1)
        #expect(try parsed(["--unsigned"], environment).environmentKeys.isEmpty, "--unsigned wins over IMGPROXY_KEY")
        #expect(try parsed(["--key", "cc", "--salt", "dd"], environment).environmentKeys.isEmpty, "--key wins")
    }

    @Test func badValuesStopTheStartNamingTheVariable() {
        #expect(refusal(["--unsigned"], ["IMGPROXY_WORKERS": "many"])?.contains("IMGPROXY_WORKERS") == true)
        #expect(refusal(["--unsigned"], ["IMGPROXY_ALLOW_SECURITY_OPTIONS": "yes"])?.contains("IMGPROXY_ALLOW_SECURITY_OPTIONS") == true)
        #expect(refusal(["--unsigned"], ["IMGPROXY_BIND": "localhost:80"])?.contains("IMGPROXY_BIND") == true)
        #expect(refusal(["--unsigned"], ["PORT": "http"])?.contains("PORT") == true)
        #expect(refusal([], ["IMGPROXY_KEY": "aa,bb", "IMGPROXY_SALT": "cc"])?.contains("IMGPROXY_KEY") == true)
        #expect(refusal(["--unsigned"], ["IMGPROXY_PRESETS": "broken"])?.contains("IMGPROXY_PRESETS") == true)
    }

    @Test func otherImgproxyNamesAreReportedAsIgnored() throws {
        let command = try parsed(["--unsigned"], ["IMGPROXY_SIGNATURE_SIZE": "8", "IMGPROXY_NO_SUCH_THING": "1", "HOME": "/root"])
        #expect(command.ignoredEnvironment.count == 2)
        #expect(command.ignoredEnvironment.contains { $0.hasPrefix("IMGPROXY_SIGNATURE_SIZE is ignored: not yet") })
        #expect(command.ignoredEnvironment.contains { $0.hasPrefix("IMGPROXY_NO_SUCH_THING is ignored") })
    }

    /// The environment alone starts the server: its address, two key pairs (a URL signed with either
    /// is served, any other is 403), and the ignored name said at start-up.
    @Test func aDeploymentsEnvironmentAloneStartsASignedServer() async throws {
        let sources = try TestHTTPServer()
        defer { sources.stop() }
        sources.route("/photo.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture()))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let child = ChildProcess(["serve", "--cache-dir", directory.url.path])
        child.process.environment = ProcessInfo.processInfo.environment.merging([
            "IMGPROXY_BIND": "127.0.0.1:0", "IMGPROXY_KEY": "6b6579,6e6577", "IMGPROXY_SALT": "73616c74,73616c32",
            "IMGPROXY_NO_SUCH_THING": "1",
        ]) { $1 }
        try await child.start()
        defer { if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) } }
        var printed = ""
        let deadline = ContinuousClock.now + .seconds(120)
        while !printed.contains("sample:"), child.process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            printed = child.outputSoFar()
        }
        let line = try #require(printed.split(separator: "\n").first { $0.hasPrefix("listening on ") }, "printed: \(printed)")
        let base = String(line.dropFirst("listening on ".count))
        let path = "/rs:fit:20:20/plain/\(sources.url("/photo.png").absoluteString)"
        for (key, salt) in [("6b6579", "73616c74"), ("6e6577", "73616c32")] {
            let signature = try ProcessingURLSigner(keyHex: key, saltHex: salt).signature(of: path)
            let (_, response) = try await URLSession.shared.data(from: URL(string: base + "/" + signature + path)!)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "signed with the pair \(key)")
        }
        let (_, unsigned) = try await URLSession.shared.data(from: URL(string: base + "/insecure" + path)!)
        #expect((unsigned as? HTTPURLResponse)?.statusCode == 403)
        child.process.terminate()
        let outcome = await child.waitForExit()
        #expect(outcome.exitedCleanly)
        #expect(outcome.errorText.contains("IMGPROXY_NO_SUCH_THING is ignored"), "\(outcome.errorText)")
        #expect(!outcome.errorText.contains("UNSIGNED"))
    }
}

/// `Docs/imgproxy-config.md` has a row for every name the environment reader knows.
@Suite struct ImgproxyConfigDocsTests {
    @Test func everyKnownNameHasARow() throws {
        let text = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("Docs/imgproxy-config.md"), encoding: .utf8)
        let names = ImgproxyEnvironment.honouredNames + ImgproxyEnvironment.notHonoured.keys.sorted()
        #expect(names.count > 30)
        let missing = names.filter { !text.contains("`\($0)`") }
        #expect(missing.isEmpty, "no row for \(missing)")
    }
}
