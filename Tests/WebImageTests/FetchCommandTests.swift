import Foundation
import Testing
@testable import webimage
@testable import WebImage

@Suite struct FetchCommandTests {
    let server: TestHTTPServer
    let directory = TemporaryDirectory()

    init() throws {
        server = try TestHTTPServer()
        server.route("/one.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture()))
        server.route("/two.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: try encodedPicture(width: 40, height: 30, as: .jpeg)))
        server.route("/missing.png", .text("no", status: 404))
        server.route("/flat.png", TestResponse(headers: [("Content-Type", "image/png")], body: try CoderRegistry.shared.encode(QualityPictures.flat(), as: .png)))
    }

    /// Runs the built `webimage` tool; returns its status and standard output lines.
    func run(_ arguments: [String]) async throws -> (status: Int32, lines: [String]) {
        let outcome = try await ChildProcess.run(arguments)
        return (outcome.status, outcome.outputLines)
    }

    @Test func parsesEveryOption() {
        guard case .success(let command) = FetchCommand.parse(
            ["--thumbnail", "64", "--out", "/tmp/o", "--cache-dir", "/tmp/c", "--concurrency", "3", "--refresh",
             "--transform", "flip=h", "http://a/x.png", "b.png"]
        ) else { Issue.record("parse failed"); return }
        #expect(command.transformer?.key == "FlippingTransformer(1,0)")
        #expect(command.thumbnail == 64 && command.concurrency == 3 && command.refresh)
        #expect(command.outputDirectory?.path == "/tmp/o" && command.cacheDirectory?.path == "/tmp/c")
        #expect(command.urls == ["http://a/x.png", "b.png"])
        #expect(FetchCommand.url(from: "b.png")?.isFileURL == true)
        #expect(FetchCommand.url(from: "http://a/x.png")?.scheme == "http")
    }

    @Test func parsesTheVariantOptions() {
        guard case .success(let command) = FetchCommand.parse(["--format", "auto", "--quality", "75", "--accept", "image/webp", "u"]) else {
            Issue.record("parse failed")
            return
        }
        #expect(command.variantFormat == .automatic(accept: "image/webp") && command.quality == 75)
        guard case .success(let exact) = FetchCommand.parse(["--format", "JPG", "u"]) else { Issue.record("parse failed"); return }
        #expect(exact.variantFormat == .exactly(.jpeg))
    }

    @Test func parsesAutomaticQualityAndTheBestFormat() {
        let parsed = [["--format", "jpeg", "--quality", "auto:0.005", "u"], ["--format", "jpeg", "--quality", "auto", "u"],
                      ["--format", "best", "--accept", "image/webp", "u"]].map { FetchCommand.parse($0) }
        guard case .success(let auto) = parsed[0], case .success(let plain) = parsed[1], case .success(let best) = parsed[2] else {
            Issue.record("parse failed: \(parsed)")
            return
        }
        #expect(auto.automaticQuality == .dssim(target: 0.005) && plain.automaticQuality == .dssim(target: 0.02))
        #expect(best.variantFormat == .best(BestFormat(accept: "image/webp")))
    }

    @Test func anAutomaticQualityFetchWritesASmallerFileForAFlatPicture() async throws {
        defer { directory.remove() }
        let url = server.url("/flat.png").absoluteString
        var sizes: [String: Int] = [:]
        for quality in ["95", "auto:0.003"] {
            let cache = directory.url.appendingPathComponent("cache-\(quality)").path
            let out = directory.url.appendingPathComponent("out-\(quality)")
            let fetched = try await run(["fetch", "--cache-dir", cache, "--format", "jpeg", "--quality", quality, "--out", out.path, url])
            #expect(fetched.status == 0, "\(fetched.lines)")
            sizes[quality] = try Data(contentsOf: out.appendingPathComponent("flat.jpg")).count
        }
        let (searched, fixed) = (try #require(sizes["auto:0.003"]), try #require(sizes["95"]))
        #expect(searched < fixed, "\(sizes)")
    }

    @Test(arguments: [[], ["--thumbnail", "0", "u"], ["--concurrency", "x", "u"], ["--bogus", "u"], ["--out"],
                      ["--transform", "resize=0x0", "u"], ["--format", "tiff", "u"], ["--quality", "80", "u"],
                      ["--format", "webp", "--quality", "0", "u"], ["--accept", "image/webp", "u"],
                      ["--format", "jpeg", "--quality", "auto:0", "u"], ["--format", "jpeg", "--quality", "auto:x", "u"], ["--quality", "auto", "u"]])
    func rejectsBadUsage(arguments: [String]) {
        guard case .failure = FetchCommand.parse(arguments) else {
            Issue.record("\(arguments) should be a usage error")
            return
        }
    }

    @Test func printsOneLinePerURLWritesOutputsAndIsServedFromDiskTheSecondTime() async throws {
        defer { directory.remove() }
        let cache = directory.url.appendingPathComponent("cache").path
        let out = directory.url.appendingPathComponent("out")
        let urls = [server.url("/one.png").absoluteString, server.url("/two.jpg").absoluteString]
        let first = try await run(["fetch", "--cache-dir", cache, "--out", out.path] + urls)
        #expect(first.status == 0)
        #expect(first.lines.count == 2)
        #expect(first.lines[0].split(separator: "\t").map(String.init).prefix(4) == [urls[0], "none", "64", "48"])
        #expect(first.lines[1].split(separator: "\t").map(String.init).prefix(4) == [urls[1], "none", "40", "30"])
        let written = try CoderRegistry.shared.decode(Data(contentsOf: out.appendingPathComponent("one.png")))
        #expect(written.size == PixelSize(width: 64, height: 48))
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent("two.jpg").path))
        let second = try await run(["fetch", "--cache-dir", cache] + urls)
        #expect(second.lines.map { $0.split(separator: "\t")[1] } == ["disk", "disk"])
        #expect(server.requestCount(for: "/one.png") == 1)
    }

    @Test func aTransformedFetchIsCachedUnderItsOwnKeyAndDerivedFromTheCachedOriginal() async throws {
        defer { directory.remove() }
        let cache = directory.url.appendingPathComponent("cache").path
        let url = server.url("/one.png").absoluteString
        let plain = try await run(["fetch", "--cache-dir", cache, url])
        #expect(plain.status == 0)
        let cropped = try await run(["fetch", "--cache-dir", cache, "--transform", "crop=0,0,10x12;rotate=90", url])
        #expect(cropped.status == 0)
        // Derived from the original on disk, without the network.
        #expect(cropped.lines.first?.split(separator: "\t").map(String.init).prefix(4) == [url, "disk", "12", "10"])
        let again = try await run(["fetch", "--cache-dir", cache, "--transform", "crop=0,0,10x12;rotate=90", url])
        #expect(again.lines.first?.split(separator: "\t").map(String.init).prefix(4) == [url, "disk", "12", "10"])
        #expect(server.requestCount(for: "/one.png") == 1)
    }

    @Test func aFailedURLPrintsAnErrorLineAndExitsWithOne() async throws {
        defer { directory.remove() }
        let url = server.url("/missing.png").absoluteString
        let result = try await run(["fetch", "--cache-dir", directory.path, "--thumbnail", "8", url])
        #expect(result.status == 1)
        let fields = result.lines.first?.split(separator: "\t").map(String.init) ?? []
        #expect(fields.prefix(2) == [url, "error"])
        #expect(fields.last?.contains("404") == true)
    }

    @Test func theDemoServesTheSecondPassFromTheDiskCache() async throws {
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let outcome = try await ChildProcess.run([], in: directory.url)
        #expect(outcome.exitedCleanly, "\(outcome.errorText)")
        let rows = outcome.outputText.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        let second = rows.filter { $0.first == "2" }
        #expect(!second.isEmpty)
        #expect(second.allSatisfy { $0.count > 2 && $0[2] == "disk" })
        let samples = directory.url.appendingPathComponent("webimage-samples")
        let written = (try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []
        #expect(written.count == 2 * second.count)   // a thumbnail and an avatar each
        let avatar = try CoderRegistry.shared.decode(Data(contentsOf: samples.appendingPathComponent("mandelbrot-jpg-avatar.png")))
        #expect(avatar.size == PixelSize(width: 96, height: 96) && avatar.pixelFormat == .rgba8)
        #expect(avatar.pixels[3] == 0)   // outside the circle
        // Every format the tool registers loads; the animated samples stay animated in their thumbnails.
        #expect(Set(second.map { $0[1] }).isSuperset(of: ["mandelbrot.webp", "mandelbrot.avif", "spinner.gif", "spinner.webp", "spinner-apng.png"]))
        #expect(second.filter { $0[1].hasPrefix("spinner") }.allSatisfy { $0[6] == "12" }, "the frames column")
        for name in ["spinner-gif.png", "spinner-webp.png", "spinner-apng-png.png"] {
            let thumbnail = try CoderRegistry.shared.decode(Data(contentsOf: samples.appendingPathComponent(name)))
            #expect(thumbnail.frames.count == 12, "\(name)")
        }
    }

    @Test func variantsAreWrittenAsTheirOwnBytesAndAWarmRunInANewProcessDecodesNothing() async throws {
        defer { directory.remove() }
        let cache = directory.url.appendingPathComponent("cache").path
        let out = directory.url.appendingPathComponent("variants")
        let urls = [server.url("/one.png").absoluteString, server.url("/two.jpg").absoluteString]
        let arguments = ["fetch", "--cache-dir", cache, "--thumbnail", "16", "--format", "webp", "--quality", "70", "--out", out.path] + urls
        let cold = try await run(arguments)
        #expect(cold.status == 0)
        #expect(cold.lines.map { $0.split(separator: "\t")[1] } == ["none", "none"])
        #expect(cold.lines.allSatisfy { $0.hasSuffix("\twebp") })
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path).sorted()
        #expect(files == ["one.webp", "two.webp"], "no temporary file is left")
        let written = try Data(contentsOf: out.appendingPathComponent("two.webp"))
        #expect(ImageFormat(sniffing: written) == .webp)
        #expect(String(cold.lines[1].split(separator: "\t")[4]) == "\(written.count)")
        let warm = try await run(arguments)
        #expect(warm.lines.map { $0.split(separator: "\t")[1] } == ["disk", "disk"], "the variants' bytes come from the disk tier")
        #expect(try Data(contentsOf: out.appendingPathComponent("two.webp")) == written)
    }
}
