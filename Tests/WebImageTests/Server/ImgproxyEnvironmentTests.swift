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
        #expect(command.allowsSecurityOptions && command.server.autoFormats == [.webp])
        #expect(command.downloadTimeout == .seconds(7) && command.maxSourceBytes == 1 << 20 && command.maxRedirects == 2)
        #expect(command.userAgent == "imgproxy-compatible" && command.localRoot?.path == "/srv/images")
        #expect(command.presets["default"] == ["q:70"] && command.presets["thumb"] == ["rs:fill:100:100"])
        #expect(command.ignoredEnvironment.isEmpty)
        #expect(try parsed(["--unsigned"], ["IMGPROXY_BIND": "[::1]:8081"]).bind == "::1")
        #expect(try parsed(["--unsigned"], ["PORT": "5000"]).port == 5000)
        #expect(try parsed(["--unsigned"], ["PORT": "5000", "IMGPROXY_BIND": "127.0.0.1:6000"]).port == 6000, "IMGPROXY_BIND wins over PORT")
    }

    @Test func svgSettingsAreApplied() throws {
        let plain = try parsed(["--unsigned"], [:])
        #expect(!plain.server.alwaysRasterizesSVG && plain.sanitizesSVG, "imgproxy's defaults: passed through, sanitised")
        let command = try parsed(["--unsigned"], ["IMGPROXY_ALWAYS_RASTERIZE_SVG": "true", "IMGPROXY_SANITIZE_SVG": "0"])
        #expect(command.server.alwaysRasterizesSVG && !command.sanitizesSVG && command.ignoredEnvironment.isEmpty)
        #expect(refusal(["--unsigned"], ["IMGPROXY_SANITIZE_SVG": "no"])?.contains("IMGPROXY_SANITIZE_SVG") == true)
    }

    @Test func preserveHDRSetsTheProcessingDefault() throws {
        #expect(try !parsed(["--unsigned"], [:]).server.processingDefaults.preservesHDR, "imgproxy's default: 8-bit results")
        let command = try parsed(["--unsigned"], ["IMGPROXY_PRESERVE_HDR": "1"])
        #expect(command.server.processingDefaults.preservesHDR && command.ignoredEnvironment.isEmpty)
        #expect(refusal(["--unsigned"], ["IMGPROXY_PRESERVE_HDR": "sometimes"])?.contains("IMGPROXY_PRESERVE_HDR") == true)
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

    /// The security, processing and URL settings, with imgproxy's syntax (megapixels as decimals,
    /// `format=quality` lists, files of keys and presets).
    @Test func securityAndProcessingSettingsAreApplied() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let keys = directory.url.appendingPathComponent("keys"), salts = directory.url.appendingPathComponent("salts")
        let presets = directory.url.appendingPathComponent("presets")
        try Data("6b6579\n6e6577\n".utf8).write(to: keys)
        try Data("73616c74\n73616c32\n".utf8).write(to: salts)
        try Data("# thumbnails\nthumb=rs:fill:64:64\n".utf8).write(to: presets)
        let command = try parsed([], [
            "IMGPROXY_PATH_PREFIX": "/images/", "IMGPROXY_SIGNATURE_SIZE": "8", "IMGPROXY_KEY_PATH": keys.path,
            "IMGPROXY_SALT_PATH": salts.path, "IMGPROXY_ALLOWED_SOURCES": "https://cdn.example.com/,s3://bucket/",
            "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "true", "IMGPROXY_ALLOW_PRIVATE_SOURCE_ADDRESSES": "false",
            "IMGPROXY_QUALITY": "70", "IMGPROXY_FORMAT_QUALITY": "jpeg=85,avif=50", "IMGPROXY_MAX_SRC_RESOLUTION": "16.8",
            "IMGPROXY_MAX_ANIMATION_FRAMES": "50", "IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION": "2", "IMGPROXY_MAX_RESULT_DIMENSION": "4000",
            "IMGPROXY_STRIP_COLOR_PROFILE": "false", "IMGPROXY_KEEP_COPYRIGHT": "f", "IMGPROXY_AUTO_ROTATE": "0",
            "IMGPROXY_HEALTH_CHECK_PATH": "/healthz", "IMGPROXY_PRESETS_PATH": presets.path,
            "IMGPROXY_PROMETHEUS_BIND": ":9464", "IMGPROXY_PROMETHEUS_NAMESPACE": "imgproxy",
            "IMGPROXY_FALLBACK_IMAGE_PATH": "/srv/fallback.png", "IMGPROXY_FALLBACK_IMAGE_HTTP_CODE": "0", "IMGPROXY_FALLBACK_IMAGE_TTL": "30",
            "IMGPROXY_WATERMARK_OPACITY": "0.4", "IMGPROXY_MAX_CLIENTS": "100", "IMGPROXY_SO_REUSEPORT": "true",
            "IMGPROXY_ENFORCE_WEBP": "1", "IMGPROXY_PREFERRED_FORMATS": "png,heic,jpeg", "IMGPROXY_TIMEOUT": "30",
            "IMGPROXY_ENABLE_CLIENT_HINTS": "true", "IMGPROXY_DISABLE_SHRINK_ON_LOAD": "1",
        ])
        #expect(command.server.readsClientHints && command.server.processingDefaults.disablesShrinkOnLoad)
        #expect(command.server.requestTimeout == .seconds(30))
        #expect(command.server.processingDefaults.watermarkOpacity == 0.4 && command.server.maxClients == 100 && command.server.reusesPort)
        #expect(command.server.enforcedFormats == [.webp] && command.server.preferredFormats == [.png, .jpeg], "heic cannot be written: left out")
        #expect(command.fallbackLocation?.path == "/srv/fallback.png" && command.fallbackStatus == nil && command.fallbackMaxAge == 30)
        #expect(command.server.prometheusListener?.bindAddress == "0.0.0.0" && command.server.prometheusListener?.port == 9464)
        #expect(command.server.prometheusNamespace == "imgproxy")
        #expect(command.server.pathPrefix == "/images" && command.server.signatureSize == 8 && command.environmentKeys.count == 2)
        #expect(command.server.allowedSources == ["https://cdn.example.com/", "s3://bucket/"] && command.server.healthCheckPath == "/healthz")
        #expect(command.sourcePolicy.allowsLoopback && !command.sourcePolicy.allowsLinkLocal && !command.sourcePolicy.allowsPrivate)
        let defaults = command.server.processingDefaults
        #expect(defaults.quality == 70 && defaults.formatQualities == [.jpeg: 85, .webp: 79, .avif: 50, .jxl: 77])
        #expect(defaults.maxSourcePixels == 16_800_000 && defaults.maxAnimationFrames == 50 && defaults.maxAnimationFramePixels == 2_000_000)
        #expect(defaults.maxResultDimension == 4000 && !defaults.stripsColorProfile && !defaults.keepsCopyright && !defaults.autoRotate)
        #expect(command.presets["thumb"] == ["rs:fill:64:64"] && command.ignoredEnvironment.isEmpty)
        for (name, value) in [("IMGPROXY_SIGNATURE_SIZE", "33"), ("IMGPROXY_QUALITY", "0"), ("IMGPROXY_FORMAT_QUALITY", "tga=80"),
                              ("IMGPROXY_MAX_SRC_RESOLUTION", "-1"), ("IMGPROXY_MAX_ANIMATION_FRAMES", "0"), ("IMGPROXY_PATH_PREFIX", "images"),
                              ("IMGPROXY_KEY_PATH", "/nonexistent/keys"), ("IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES", "yes"),
                              ("IMGPROXY_FALLBACK_IMAGE_HTTP_CODE", "700"), ("IMGPROXY_FALLBACK_IMAGE_URL", "ftp://x/y.png"),
                              ("IMGPROXY_PROMETHEUS_BIND", "metrics:9464")] {
            #expect(refusal([], [name: value])?.contains(name) == true, "\(name)=\(value)")
        }
    }

    /// imgproxy's `ALLOWED_SOURCES` patterns: prefixes, `*` standing for anything but `/`.
    @Test func allowedSourcePatternsMatchAsImgproxys() {
        var config = ImageServerConfig(signing: .unsigned)
        #expect(config.allows(sourceText: "http://anything/x.png"), "no patterns: any source")
        config.allowedSources = ["https://*.example.com/", "s3://images/"]
        #expect(config.allows(sourceText: "https://cdn.example.com/a/b.png") && config.allows(sourceText: "s3://images/x.jpg"))
        #expect(!config.allows(sourceText: "https://evil.com/.example.com/x.png"), "a star never crosses a slash")
        #expect(!config.allows(sourceText: "https://example.com/x.png") && !config.allows(sourceText: "http://cdn.example.com/x.png"))
        #expect(!config.allows(sourceText: "s3://images-other/x.jpg"))
    }

    @Test func otherImgproxyNamesAreReportedAsIgnored() throws {
        let command = try parsed(["--unsigned"], ["IMGPROXY_NETWORK": "unix", "IMGPROXY_NO_SUCH_THING": "1", "HOME": "/root"])
        #expect(command.ignoredEnvironment.count == 2)
        #expect(command.ignoredEnvironment.contains { $0.hasPrefix("IMGPROXY_NETWORK is ignored: only TCP") })
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
            "IMGPROXY_NO_SUCH_THING": "1", "IMGPROXY_ALLOW_LOOPBACK_SOURCE_ADDRESSES": "1", "IMGPROXY_PATH_PREFIX": "/img",
            "IMGPROXY_SIGNATURE_SIZE": "8", "IMGPROXY_HEALTH_CHECK_PATH": "/healthz",
            "IMGPROXY_FALLBACK_IMAGE_DATA": try encodedPicture(width: 40, height: 40, seed: 5).base64EncodedString(),
        ]) { $1 }
        try await child.start()
        defer { if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) } }
        let (base, _) = try await child.servedBase()
        let path = "/rs:fit:20:20/plain/\(sources.url("/photo.png").absoluteString)"
        for (key, salt) in [("6b6579", "73616c74"), ("6e6577", "73616c32")] {
            let signature = try ProcessingURLSigner(keyHex: key, saltHex: salt, signatureSize: 8).signature(of: path)
            #expect(signature.count == 11, "8 bytes of HMAC in base64url")
            let (_, response) = try await URLSession.shared.data(from: URL(string: base + "/img/" + signature + path)!)
            #expect((response as? HTTPURLResponse)?.statusCode == 200, "signed with the pair \(key), under the path prefix")
            let (_, outside) = try await URLSession.shared.data(from: URL(string: base + "/" + signature + path)!)
            #expect((outside as? HTTPURLResponse)?.statusCode == 404, "outside the path prefix")
        }
        let full = try ProcessingURLSigner(keyHex: "6b6579", saltHex: "73616c74").signature(of: path)
        let (_, long) = try await URLSession.shared.data(from: URL(string: base + "/img/" + full + path)!)
        #expect((long as? HTTPURLResponse)?.statusCode == 403, "a full-length signature is not the 8-byte one")
        let (_, unsigned) = try await URLSession.shared.data(from: URL(string: base + "/img/insecure" + path)!)
        #expect((unsigned as? HTTPURLResponse)?.statusCode == 403)
        let missing = "/rs:fit:20:20/plain/\(sources.url("/missing.png").absoluteString)"
        let fallbackSignature = try ProcessingURLSigner(keyHex: "6b6579", saltHex: "73616c74", signatureSize: 8).signature(of: missing)
        let (fallbackBody, fallback) = try await URLSession.shared.data(from: URL(string: base + "/img/" + fallbackSignature + missing)!)
        #expect((fallback as? HTTPURLResponse)?.statusCode == 200, "IMGPROXY_FALLBACK_IMAGE_DATA answers a missing source")
        #expect(try CoderRegistry.shared.decode(fallbackBody).size == PixelSize(width: 20, height: 20))
        for health in ["/img/health", "/img/healthz"] {
            let (_, answer) = try await URLSession.shared.data(from: URL(string: base + health)!)
            #expect((answer as? HTTPURLResponse)?.statusCode == 200, "\(health)")
        }
        child.process.terminate()
        let outcome = await child.waitForExit()
        #expect(outcome.exitedCleanly)
        #expect(outcome.errorText.contains("IMGPROXY_NO_SUCH_THING is ignored"), "\(outcome.errorText)")
        #expect(!outcome.errorText.contains("UNSIGNED"))
    }
}

/// imgproxy Pro's `IMGPROXY_AUTOQUALITY_*` and `IMGPROXY_BEST_FORMAT_*`.
extension ImgproxyEnvironmentTests {
    @Test func autoqualityAndBestFormatSettingsAreApplied() throws {
        let command = try parsed(["--unsigned"], [
            "IMGPROXY_AUTOQUALITY_METHOD": "dssim", "IMGPROXY_AUTOQUALITY_TARGET": "0.015", "IMGPROXY_AUTOQUALITY_MIN": "50",
            "IMGPROXY_AUTOQUALITY_MAX": "90", "IMGPROXY_AUTOQUALITY_FORMAT_MIN": "jpeg=55, avif=40", "IMGPROXY_AUTOQUALITY_FORMAT_MAX": "avif=50",
            "IMGPROXY_AUTOQUALITY_ALLOWED_ERROR": "0.001", "IMGPROXY_AUTOQUALITY_MAX_RESOLUTION": "2.5",
            "IMGPROXY_BEST_FORMAT_COMPLEXITY_THRESHOLD": "7", "IMGPROXY_BEST_FORMAT_MAX_RESOLUTION": "4",
            "IMGPROXY_BEST_FORMAT_BY_DEFAULT": "true", "IMGPROXY_BEST_FORMAT_ALLOW_SKIPS": "1",
        ])
        let quality = command.server.processingDefaults.autoQuality
        #expect(quality.method == .dssim && quality.target == 0.015 && quality.minQuality == 50 && quality.maxQuality == 90)
        #expect(quality.formatMinQualities == [.jpeg: 55, .avif: 40] && quality.formatMaxQualities == [.avif: 50])
        #expect(quality.allowedError == 0.001 && quality.maxPixelCount == 2_500_000)
        let automatic = try #require(try quality.automaticQuality())
        #expect(automatic.qualityRange(for: .jpeg) == 55...90 && automatic.qualityRange(for: .avif) == 40...50)
        let best = command.server.bestFormat
        #expect(best.complexityThreshold == 7 && best.maxPixelCount == 4_000_000 && best.isDefault && best.allowsSkips)
    }

    @Test func badAutoqualitySettingsStopTheStart() {
        for (name, value) in [("IMGPROXY_AUTOQUALITY_METHOD", "fast"), ("IMGPROXY_AUTOQUALITY_TARGET", "-1"),
                              ("IMGPROXY_AUTOQUALITY_MIN", "0"), ("IMGPROXY_AUTOQUALITY_FORMAT_MIN", "jpeg"),
                              ("IMGPROXY_AUTOQUALITY_ALLOWED_ERROR", "200"), ("IMGPROXY_BEST_FORMAT_COMPLEXITY_THRESHOLD", "x")] {
            #expect(refusal(["--unsigned"], [name: value])?.contains(name) == true, "\(name)=\(value)")
        }
        let sizeWithoutBytes = refusal(["--unsigned"], ["IMGPROXY_AUTOQUALITY_METHOD": "size"])
        #expect(sizeWithoutBytes?.contains("bytes") == true, "size needs a byte target, not the DSSIM default: \(sizeWithoutBytes ?? "started")")
        #expect(refusal(["--unsigned"], ["IMGPROXY_AUTOQUALITY_MIN": "90", "IMGPROXY_AUTOQUALITY_MAX": "80"]) != nil)
        #expect(refusal(["--unsigned"], ["IMGPROXY_AUTOQUALITY_JPEG_NET": "/models/jpeg.onnx"]) == nil, "a model path is reported, not refused")
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
