import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// How the server picks an answer's format (imgproxy 4's `determineOutputFormat`), seen over HTTP:
/// the preferred formats by default, automatic and enforced modern formats from `Accept`.
@Suite struct FormatPolicyTests {
    func fixture(_ configure: @escaping (inout ImageServerConfig) -> Void = { _ in }) async throws -> ServerFixture {
        let fixture = try await ServerFixture(configure: configure)
        let photo = try Image(width: 40, height: 20, pixelFormat: .rgb8, pixels: [UInt8](repeating: 120, count: 40 * 20 * 3))
        let clear = try Image(width: 40, height: 20, pixelFormat: .rgba8, pixels: [UInt8](repeating: 60, count: 40 * 20 * 4))
        fixture.sources.route("/photo.webp", TestResponse(headers: [("Content-Type", "image/webp")], body: try ServerFixture.coders.encode(photo, as: .webp)))
        fixture.sources.route("/clear.webp", TestResponse(headers: [("Content-Type", "image/webp")], body: try ServerFixture.coders.encode(clear, as: .webp)))
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: try ServerFixture.coders.encode(photo, as: .jpeg)))
        return fixture
    }

    @Test func byDefaultTheSourceBecomesOneOfThePreferredFormats() async throws {
        let fixture = try await fixture()
        let opaque = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/photo.webp"))", headers: ["Accept": "image/webp"])
        #expect(opaque.header("Content-Type") == "image/jpeg" && opaque.header("Vary") == nil, "a WebP source becomes JPEG, as imgproxy")
        let alpha = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/clear.webp"))")
        #expect(alpha.header("Content-Type") == "image/png", "with alpha: the first preferred format that holds it")
        let jpeg = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/photo.jpg"))")
        #expect(jpeg.header("Content-Type") == "image/jpeg", "a preferred source format stays")
        await fixture.stop()
        let pngOnly = try await self.fixture { $0.preferredFormats = [.png] }
        #expect(try await pngOnly.get("/insecure/w:20/plain/\(pngOnly.source("/photo.jpg"))").header("Content-Type") == "image/png")
        await pngOnly.stop()
    }

    @Test func automaticAndEnforcedFormatsFollowAccept() async throws {
        let webpOnly = try await fixture { $0.autoFormats = [.webp] }
        let both = "image/avif,image/webp,*/*"
        let auto = try await webpOnly.get("/insecure/w:20/plain/\(webpOnly.source("/photo.jpg"))", headers: ["Accept": both])
        #expect(auto.header("Content-Type") == "image/webp" && auto.header("Vary") == "Accept", "AUTO_WEBP alone never picks AVIF")
        let named = try await webpOnly.get("/insecure/w:20/plain/\(webpOnly.source("/photo.jpg"))@png", headers: ["Accept": both])
        #expect(named.header("Content-Type") == "image/png" && named.header("Vary") == nil, "a named format wins over AUTO")
        await webpOnly.stop()

        let enforcing = try await fixture { $0.enforcedFormats = [.avif] }
        let enforced = try await enforcing.get("/insecure/w:20/plain/\(enforcing.source("/photo.jpg"))@png", headers: ["Accept": both])
        #expect(enforced.header("Content-Type") == "image/avif" && enforced.header("Vary") == "Accept", "ENFORCE_AVIF beats the named format")
        let old = try await enforcing.get("/insecure/w:20/plain/\(enforcing.source("/photo.jpg"))@png", headers: ["Accept": "image/png"])
        #expect(old.header("Content-Type") == "image/png" && old.header("Vary") == "Accept", "a client without AVIF gets the named format")
        await enforcing.stop()
    }
}
