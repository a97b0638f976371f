import Foundation
import Synchronization
import Testing
@testable import WebImage
@testable import WebImageServer

/// `webimage serve`'s `/info`: imgproxy's URL forms, signed like image URLs, answering the facts as
/// imgproxy-shaped JSON with an ETag and `Cache-Control`; warm answers before a slot; options parsed
/// with imgproxy's rules and refused with reasons.
@Suite struct InfoEndpointTests {
    let picture: Data

    init() throws {
        picture = try encodedPicture(width: 300, height: 200, as: .jpeg)
    }

    func serve(_ fixture: ServerFixture, _ path: String = "/photo.jpg") {
        fixture.sources.route(path, TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture))
    }

    func object(_ reply: ServerFixture.Reply) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any])
    }

    @Test func plainAndBase64SourcesAnswerTheSameFactsWithAnETagAndA304() async throws {
        let fixture = try await ServerFixture()
        serve(fixture)
        let source = fixture.source("/photo.jpg")
        let plain = try await fixture.get("/info/insecure/plain/\(source)")
        #expect(plain.status == 200 && plain.header("Content-Type") == "application/json")
        let facts = try object(plain)
        #expect(facts["width"] as? Int == 300 && facts["height"] as? Int == 200 && facts["format"] as? String == "jpeg")
        #expect(facts["mime_type"] as? String == "image/jpeg" && facts["size"] as? Int == picture.count && facts["orientation"] as? Int == 1)
        let blurHash = try #require(facts["blurhash"] as? String)
        #expect(try BlurHash(string: blurHash).xComponents == 4)
        let thumbHash = try #require(facts["thumbhash"] as? String)
        #expect(try ThumbHash(base64: thumbHash).bytes.count > 5)
        let dominant = try #require(facts["dominant_color"] as? [String: Int])
        #expect(Set(dominant.keys) == ["R", "G", "B", "A"])
        #expect(facts["average"] == nil && facts["alpha"] == nil, "imgproxy's default answer leaves them out")

        let encoded = Data(source.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let base64 = try await fixture.get("/info/insecure/\(encoded)")
        #expect(base64.status == 200 && base64.body == plain.body)
        let tag = try #require(plain.header("ETag"))
        #expect(plain.header("Cache-Control") == "max-age=31536000, public")
        let again = try await fixture.get("/info/insecure/plain/\(source)", headers: ["If-None-Match": tag])
        #expect(again.status == 304)
        #expect(fixture.sources.requestCount(for: "/photo.jpg") == 1, "one download; the rest from the facts' cache")
        await fixture.stop()
    }

    @Test func optionsChooseTheFields() async throws {
        let fixture = try await ServerFixture()
        serve(fixture)
        let source = fixture.source("/photo.jpg")
        let reply = try await fixture.get("/info/insecure/s:0/f:0/bh:5:2/th:1/pn:1/a:1/avg:1/dc:0/ex:1/cb:7/plain/\(source)")
        #expect(reply.status == 200)
        let facts = try object(reply)
        #expect(facts["size"] == nil && facts["format"] == nil && facts["dominant_color"] == nil)
        #expect(facts["pages_number"] as? Int == 1 && facts["alpha"] as? Bool == false)
        #expect((facts["average"] as? [String: Int])?["A"] == 255)
        let blurHash = try #require(facts["blurhash"] as? String)
        #expect(blurHash.count == 4 + 2 * 5 * 2, "5x2 components")
        let hex = try #require(facts["thumb_hash"] as? String)
        let base64 = try #require(facts["thumbhash"] as? String)
        #expect(hex == (try ThumbHash(base64: base64)).bytes.map { String(format: "%02X", $0) }.joined(), "imgproxy's hex form of the same bytes")
        let none = try object(try await fixture.get("/info/insecure/bh:0:0/plain/\(source)"))
        #expect(none["blurhash"] == nil)
        await fixture.stop()
    }

    @Test(arguments: ["/info/insecure/palette:5/plain/SRC", "/info/insecure/bh:10:2/plain/SRC", "/info/insecure/bogus:1/plain/SRC",
                      "/info/insecure/pg:2/plain/SRC", "/info/insecure/plain/SRC@png", "/info/insecure/exp:soon/plain/SRC",
                      "/info/insecure", "/info/insecure/s:1/s:1:2/plain/SRC"])
    func badOptionsAre400WithAReason(_ template: String) async throws {
        let fixture = try await ServerFixture()
        serve(fixture)
        let reply = try await fixture.get(template.replacingOccurrences(of: "SRC", with: fixture.source("/photo.jpg")))
        #expect(reply.status == 400, "\(template)")
        #expect(String(decoding: reply.body, as: UTF8.self).hasPrefix("bad request: "))
        #expect(fixture.sources.requestCount(for: "/photo.jpg") == 0, "nothing is fetched for a bad URL")
        await fixture.stop()
    }

    @Test func signedLikeImageURLsAndExpiring() async throws {
        let key = "6b6579", salt = "73616c74"
        let fixture = try await ServerFixture(signing: .signed(keyHex: key, saltHex: salt))
        serve(fixture)
        let signedPath = "/bh:4:3/plain/\(fixture.source("/photo.jpg"))"
        let signature = try ProcessingURLSigner(keyHex: key, saltHex: salt).signature(of: signedPath)
        #expect(try await fixture.get("/info/\(signature)\(signedPath)").status == 200)
        #expect(try await fixture.get("/info/insecure\(signedPath)").status == 403)
        let tampered = (signature.first == "A" ? "B" : "A") + signature.dropFirst()   // the first character is all signature bits
        #expect(try await fixture.get("/info/\(tampered)\(signedPath)").status == 403)
        let expired = "/exp:1000/plain/\(fixture.source("/photo.jpg"))"
        let expiredSignature = try ProcessingURLSigner(keyHex: key, saltHex: salt).signature(of: expired)
        #expect(try await fixture.get("/info/\(expiredSignature)\(expired)").status == 404)
        await fixture.stop()
    }

    @Test func failuresMapToStatuses() async throws {
        let fixture = try await ServerFixture()
        fixture.sources.route("/missing.jpg", TestResponse(status: 404, body: Data("no".utf8)))
        fixture.sources.route("/text.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: Data(repeating: 7, count: 500)))
        #expect(try await fixture.get("/info/insecure/plain/\(fixture.source("/missing.jpg"))").status == 404)
        #expect(try await fixture.get("/info/insecure/plain/\(fixture.source("/text.jpg"))").status == 422)
        #expect(try await fixture.get("/info/insecure/plain/local:///x.jpg").status == 404, "no local root (imgproxy: 404, unknown scheme)")
        await fixture.stop()
    }

    @Test func warmFactsAreAnsweredWhileTheOnlySlotIsHeld() async throws {
        let fixture = try await ServerFixture { config in
            config.maxInFlight = 1
            config.queueLimit = 0
        }
        serve(fixture)
        let warm = "/info/insecure/plain/\(fixture.source("/photo.jpg"))"
        #expect(try await fixture.get(warm).status == 200)
        let gate = ImageServerTests.Gate(), picture = self.picture
        fixture.sources.route("/hold.jpg") { _ in
            let deadline = ContinuousClock.now + busyMachineBound
            while !gate.opened && ContinuousClock.now < deadline { usleep(2000) }
            return TestResponse(headers: [("Content-Type", "image/jpeg")], body: picture)
        }
        let held = Task { try await fixture.get("/info/insecure/plain/\(fixture.source("/hold.jpg"))").status }
        try await waitUntil { fixture.server.metrics.inFlight.load(ordering: .relaxed) == 1 }
        #expect(try await fixture.get("/info/insecure/plain/\(fixture.source("/hold.jpg"))?again").status == 429, "cold work is refused")
        for _ in 0..<3 { #expect(try await fixture.get(warm).status == 200, "warm facts are answered") }
        gate.open()
        #expect(try await held.value == 200)
        await fixture.stop()
    }

    @Test func theInfoOptionsParseAsImgproxysDo() throws {
        func parse(_ options: String) throws -> InfoRequest {
            try InfoRequest(path: ProcessingPath(path: "/insecure/\(options)/plain/http://a/b.jpg"))
        }
        #expect(try parse("s:1").fields == .standard)
        #expect(try parse("blurhash:2:7").blurHashX == 2 && parse("bh:2:7").blurHashY == 7)
        #expect(try parse("bh::").fields.contains(.blurHash), "empty arguments keep the values")
        #expect(try !parse("dimensions:false").fields.contains(.dimensions) && parse("d:yes").fields.contains(.dimensions) == false)
        #expect(try parse("thumb_hash:t").fields.contains(.hexThumbHash))
    }
}
