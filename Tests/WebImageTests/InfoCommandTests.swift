import Foundation
import Testing
@testable import webimage
@testable import WebImage

/// `webimage info`: the facts of files and URLs, as lines or JSON, with the pixels the placeholders
/// were computed from when asked; failures print an error and exit with 1.
@Suite struct InfoCommandTests {
    let server: TestHTTPServer
    let directory = TemporaryDirectory()

    init() throws {
        server = try TestHTTPServer()
        server.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: try encodedPicture(width: 240, height: 160, as: .jpeg)))
        server.route("/missing.png", .text("no", status: 404))
    }

    @Test func parsesItsOptions() {
        guard case .success(let command) = InfoCommand.parse(["--json", "--cache-dir", "/tmp/c", "--placeholder-pixels", "/tmp/p", "a.png", "http://x/y"]) else {
            Issue.record("parse failed")
            return
        }
        #expect(command.json && command.cacheDirectory?.path == "/tmp/c" && command.pixelsDirectory?.path == "/tmp/p")
        #expect(command.inputs == ["a.png", "http://x/y"])
        for bad in [[], ["--json"], ["--bogus", "a"], ["--cache-dir"], ["--placeholder-pixels"]] {
            guard case .failure = InfoCommand.parse(bad) else { Issue.record("\(bad) should be a usage error"); continue }
        }
    }

    @Test func printsALinePerInputAndTheSameFactsAsJSON() async throws {
        defer { directory.remove() }
        let url = server.url("/photo.jpg").absoluteString
        let file = Corpus.root.appendingPathComponent("jpeg/valid/exif-orientation-examples/Landscape_6.jpg").path
        let lines = try await ChildProcess.run(["info", url, file])
        #expect(lines.exitedCleanly, "\(lines.errorText)")
        let fields = lines.outputLines.map { $0.split(separator: "\t").map(String.init) }
        let byteCount = try encodedPicture(width: 240, height: 160, as: .jpeg).count
        #expect(fields.count == 2 && fields[0].prefix(6) == [url, "jpeg", "240", "160", "1", "\(byteCount)"])
        #expect(fields[1][7] == "6", "the EXIF orientation")
        #expect(Int(fields[1][2])! > Int(fields[1][3])!, "the upright size of a landscape photo stored turned")

        let json = try await ChildProcess.run(["info", "--json", "--placeholder-pixels", directory.path, url])
        #expect(json.exitedCleanly, "\(json.errorText)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.outputText.utf8)) as? [String: Any])
        #expect(object["file"] as? String == url && object["width"] as? Int == 240 && object["blurhash"] as? String == fields[0][9])
        #expect(object["thumbhash"] as? String == fields[0][10] && object["tier"] as? String == "none")
        let blurPixels = try #require(object["blurhash_pixels"] as? String), thumbPixels = try #require(object["thumbhash_pixels"] as? String)
        let rgb = try CoderRegistry.shared.decode(try Data(contentsOf: URL(fileURLWithPath: blurPixels)))
        let rgba = try CoderRegistry.shared.decode(try Data(contentsOf: URL(fileURLWithPath: thumbPixels)))
        #expect(rgb.size == PixelSize(width: 100, height: 67) && rgba.size == rgb.size)
        let rewritten = try BlurHash(encoding: rgb).string
        #expect(rewritten == fields[0][9], "the written pixels give the printed hash")
        #expect(server.requestCount(for: "/photo.jpg") == 2, "one download per run (each run has its own cache)")
    }

    @Test func aFailurePrintsAnErrorAndExitsWithOne() async throws {
        let url = server.url("/missing.png").absoluteString
        let result = try await ChildProcess.run(["info", "--json", url])
        #expect(result.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.outputText.utf8)) as? [String: Any])
        #expect(object["file"] as? String == url && (object["error"] as? String)?.contains("404") == true)
    }
}
