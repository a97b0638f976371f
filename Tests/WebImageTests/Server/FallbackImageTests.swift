import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's fallback image (`IMGPROXY_FALLBACK_IMAGE_*`) through the server: a source that cannot
/// be downloaded is answered with the fallback picture, processed as the URL asks, with the
/// configured status and `max-age`; a source that downloads but is no image keeps its error.
@Suite struct FallbackImageTests {
    func fixture(status: Int?, maxAge: Int?) async throws -> (ServerFixture, TemporaryDirectory) {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let file = directory.url.appendingPathComponent("fallback.png")
        try encodedPicture(width: 300, height: 100, seed: 9).write(to: file)
        let fixture = try await ServerFixture { $0.fallbackImage = FallbackImage(url: file, status: status, maxAge: maxAge) }
        fixture.sources.route("/text.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: Data("not an image".utf8)))
        fixture.sources.route("/broken.jpg", TestResponse(status: 500, body: Data("oops".utf8)))
        return (fixture, directory)
    }

    @Test func aSourceThatCannotBeDownloadedIsAnsweredWithTheFallbackProcessedAsAsked() async throws {
        let (fixture, directory) = try await fixture(status: 200, maxAge: 60)
        defer { directory.remove() }
        for missing in ["/missing.jpg", "/broken.jpg"] {
            let reply = try await fixture.get("/insecure/rs:fit:60:60/plain/\(fixture.source(missing))@png")
            #expect(reply.status == 200 && reply.header("Fallback-Image") == "1", "\(missing)")
            #expect(reply.header("Cache-Control") == "max-age=60, public", "\(missing)")
            #expect(try ServerFixture.coders.decode(reply.body).size == PixelSize(width: 60, height: 20), "the fallback, fitted into 60x60")
        }
        let again = try await fixture.get("/insecure/rs:fit:30:30/plain/\(fixture.source("/missing.jpg"))@png")
        #expect(try again.status == 200 && ServerFixture.coders.decode(again.body).size == PixelSize(width: 30, height: 10),
                "a remembered failure gets the fallback too")
        let notImage = try await fixture.get("/insecure/rs:fit:60:60/plain/\(fixture.source("/text.jpg"))@png")
        #expect(notImage.status == 422 && notImage.header("Fallback-Image") == nil, "a source that is no image keeps its error")
        await fixture.stop()
    }

    @Test func theFailuresOwnStatusWhenAsked() async throws {
        let (fixture, directory) = try await fixture(status: nil, maxAge: nil)
        defer { directory.remove() }
        let reply = try await fixture.get("/insecure/w:50/plain/\(fixture.source("/missing.jpg"))@png")
        #expect(reply.status == 404 && reply.header("Content-Type") == "image/png" && reply.header("Fallback-Image") == "1")
        #expect(reply.header("Cache-Control") == "max-age=31536000, public")
        await fixture.stop()
    }
}
