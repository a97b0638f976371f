import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's access settings through the server: a secret in `Authorization`, CORS headers and
/// preflight, trusted signatures, `s3://` sources off, a path prefix and a second health path.
@Suite struct ServerAccessTests {
    let photo: Data

    init() throws {
        photo = try encodedPicture(width: 40, height: 20, as: .jpeg)
    }

    /// `IMGPROXY_SECRET`: an image or `/info` request without `Authorization: Bearer <secret>` is
    /// 403 and fetches nothing; `/health` needs none.
    @Test func aSecretGuardsImagesAndInfo() async throws {
        let fixture = try await ServerFixture { $0.secret = "s3cr3t" }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let path = "/insecure/w:10/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get(path).status == 403)
        #expect(try await fixture.get(path, headers: ["Authorization": "Bearer wrong"]).status == 403)
        #expect(try await fixture.get("/info" + path.replacingOccurrences(of: "/w:10", with: "")).status == 403)
        #expect(fixture.sources.requestCount(for: "/photo.jpg") == 0)
        #expect(try await fixture.get(path, headers: ["Authorization": "Bearer s3cr3t"]).status == 200)
        #expect(try await fixture.get("/health").status == 200)
        await fixture.stop()
    }

    /// `IMGPROXY_ALLOW_ORIGIN`: every answer carries it, errors too, and `OPTIONS` is answered 200.
    @Test func corsHeadersAndPreflight() async throws {
        let fixture = try await ServerFixture { $0.allowOrigin = "https://example.com" }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let image = try await fixture.get("/insecure/w:10/plain/\(fixture.source("/photo.jpg"))")
        #expect(image.status == 200 && image.header("Access-Control-Allow-Origin") == "https://example.com")
        #expect(image.header("Access-Control-Allow-Methods") == "GET, OPTIONS")
        let missing = try await fixture.get("/insecure/w:10/plain/\(fixture.source("/missing.jpg"))")
        #expect(missing.status == 404 && missing.header("Access-Control-Allow-Origin") == "https://example.com")
        let preflight = try await fixture.get("/insecure/w:10/plain/x", method: "OPTIONS")
        #expect(preflight.status == 200 && preflight.header("Access-Control-Allow-Origin") == "https://example.com")
        await fixture.stop()
        let plain = try await ServerFixture()
        #expect(try await plain.get("/health").header("Access-Control-Allow-Origin") == nil, "none unless configured")
        await plain.stop()
    }

    /// `IMGPROXY_TRUSTED_SIGNATURES`: listed signatures pass for any path on a signed server.
    @Test func trustedSignaturesPass() async throws {
        let fixture = try await ServerFixture(signing: .signed(keyHex: "6b6579", saltHex: "73616c74")) { $0.trustedSignatures = ["trusted1"] }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let path = "/w:10/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get("/trusted1" + path).status == 200)
        #expect(try await fixture.get("/trusted2" + path).status == 403)
        await fixture.stop()
    }

    /// `IMGPROXY_USE_S3` off (`webimage serve`'s default): an `s3://` source is 404 at once.
    @Test func s3SourcesCanBeTurnedOff() async throws {
        let fixture = try await ServerFixture { $0.readsS3Sources = false }
        let refused = try await fixture.get("/insecure/w:10/plain/s3://bucket/photo.jpg")
        #expect(refused.status == 404 && String(decoding: refused.body, as: UTF8.self).contains("IMGPROXY_USE_S3"))
        await fixture.stop()
    }

    /// `IMGPROXY_PATH_PREFIX` and `IMGPROXY_HEALTH_CHECK_PATH`: every route under the prefix, a
    /// look-alike prefix refused, the extra health path answered.
    @Test func aPathPrefixAndAHealthPath() async throws {
        let fixture = try await ServerFixture { config in
            config.pathPrefix = "/img"
            config.healthCheckPath = "/ready"
        }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let path = "/insecure/w:10/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get("/img" + path).status == 200)
        #expect(try await fixture.get(path).status == 404)
        #expect(try await fixture.get("/images" + path).status == 404, "a prefix is a whole segment")
        #expect(try await fixture.get("/img/health").status == 200)
        #expect(try await fixture.get("/img/ready").status == 200)
        await fixture.stop()
    }
}
