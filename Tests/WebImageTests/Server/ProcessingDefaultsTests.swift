import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// A server's imgproxy settings (``ProcessingDefaults``, allowed sources), seen where a client sees
/// them: through the server over HTTP, with the URL's own options still winning.
@Suite struct ProcessingDefaultsTests {
    let photo: Data
    let animation: Data

    init() throws {
        photo = try encodedPicture(width: 200, height: 100, seed: 3, as: .jpeg)
        animation = try Data(contentsOf: Corpus.root.appendingPathComponent("gif/valid/wuffs/animated-red-blue.gif"))   // 4 frames, 64x48
    }

    private func fixture(_ configure: @escaping (inout ProcessingDefaults) -> Void) async throws -> ServerFixture {
        let fixture = try await ServerFixture { config in
            configure(&config.processingDefaults)
            config.allowsSecurityOptions = true
        }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        fixture.sources.route("/animated.gif", TestResponse(headers: [("Content-Type", "image/gif")], body: animation))
        return fixture
    }

    /// `IMGPROXY_QUALITY` and `IMGPROXY_FORMAT_QUALITY`: the bytes are those of the URL asking for
    /// that quality itself; a URL's `q` still wins.
    @Test func theServersQualitiesAreTheDefaultsAndTheURLsWin() async throws {
        let fixture = try await fixture { $0.quality = 30; $0.formatQualities[.webp] = 90 }
        let source = fixture.source("/photo.jpg")
        let byDefault = try await fixture.get("/insecure/w:100/plain/\(source)@jpg")
        let asked30 = try await fixture.get("/insecure/w:100/q:30/plain/\(source)@jpg")
        let asked80 = try await fixture.get("/insecure/w:100/q:80/plain/\(source)@jpg")
        #expect(byDefault.status == 200 && byDefault.body == asked30.body, "the server's quality, 30")
        #expect(asked80.body.count > byDefault.body.count, "q:80 wins over it")
        let webp = try await fixture.get("/insecure/w:100/plain/\(source)@webp")
        let webp90 = try await fixture.get("/insecure/w:100/q:90/plain/\(source)@webp")
        #expect(webp.status == 200 && webp.body == webp90.body, "WebP's own quality, 90")
        await fixture.stop()
    }

    /// `IMGPROXY_MAX_ANIMATION_FRAMES` (imgproxy's default 1: the first frame only), a URL's
    /// `max_animation_frames` over it; `IMGPROXY_MAX_RESULT_DIMENSION` scaling every result down;
    /// `IMGPROXY_MAX_SRC_RESOLUTION` refusing larger sources with 422.
    @Test func securityDefaultsApplyToEveryURL() async throws {
        let fixture = try await fixture { $0.maxAnimationFrames = 1; $0.maxResultDimension = 40 }
        let gif = fixture.source("/animated.gif"), source = fixture.source("/photo.jpg")
        let first = try await fixture.get("/insecure/plain/\(gif)@gif")
        #expect(try first.status == 200 && ServerFixture.coders.decode(first.body).frames.count == 1, "one frame by default")
        let all = try await fixture.get("/insecure/maf:10/plain/\(gif)@gif")
        #expect(try all.status == 200 && ServerFixture.coders.decode(all.body).frames.count == 4, "the URL asks for more")
        let three = try await fixture.get("/insecure/maf:3/plain/\(gif)@gif")
        #expect(try three.status == 200 && ServerFixture.coders.decode(three.body).frames.count == 3, "the first three are kept")
        let scaled = try await fixture.get("/insecure/w:0/plain/\(source)@png")
        #expect(try scaled.status == 200 && ServerFixture.coders.decode(scaled.body).size == PixelSize(width: 40, height: 20))
        await fixture.stop()

        let small = try await self.fixture { $0.maxSourcePixels = 10_000 }
        let refused = try await small.get("/insecure/w:50/plain/\(small.source("/photo.jpg"))")
        #expect(refused.status == 422 && refused.header("Cache-Control") == "no-cache", "200x100 is more than 10,000 pixels")
        await small.stop()
    }

    /// `IMGPROXY_ENABLE_CLIENT_HINTS`: `DPR` and `Width` (or their `Sec-CH-` forms) set the ratio and
    /// the width in CSS pixels, the URL's own options win, and `Vary` names the hints.
    @Test func clientHintsSetTheRatioAndTheWidth() async throws {
        #expect(!ImageServerConfig(signing: .unsigned).readsClientHints, "off by default, as imgproxy")
        let hinted = try await ServerFixture { $0.readsClientHints = true }
        hinted.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))   // 200x100
        let source = hinted.source("/photo.jpg")
        let both = try await hinted.get("/insecure/plain/\(source)@png", headers: ["DPR": "2", "Width": "100"])
        #expect(try ServerFixture.coders.decode(both.body).size == PixelSize(width: 100, height: 50), "50 CSS px at a ratio of 2")
        #expect(both.header("Vary") == "Sec-CH-DPR, DPR, Sec-CH-Width, Width")
        let modern = try await hinted.get("/insecure/plain/\(source)@png", headers: ["Sec-CH-DPR": "1.5", "DPR": "3", "Sec-CH-Width": "60"])
        #expect(try ServerFixture.coders.decode(modern.body).size == PixelSize(width: 60, height: 30), "the Sec-CH- forms first")
        let urlWins = try await hinted.get("/insecure/w:40/plain/\(source)@png", headers: ["DPR": "2", "Width": "100"])
        #expect(try ServerFixture.coders.decode(urlWins.body).size == PixelSize(width: 80, height: 40), "the URL's width, at the hinted ratio")
        let absurd = try await hinted.get("/insecure/w:40/plain/\(source)@png", headers: ["DPR": "9"])
        #expect(try ServerFixture.coders.decode(absurd.body).size == PixelSize(width: 40, height: 20), "a ratio over 8 is not read")
        await hinted.stop()
    }

    /// `IMGPROXY_DISABLE_SHRINK_ON_LOAD`: no scaled-down decode is asked for.
    @Test func shrinkOnLoadCanBeTurnedOff() throws {
        let path = try ProcessingPath(path: "/s/rs:fit:100:50/plain/http://h/x.jpg")
        let on = VariantParameters(request: try ProcessingRequest(path: path), accept: nil)
        #expect(on.context.thumbnailPixelSize == PixelSize(width: 100, height: 50))
        var defaults = ProcessingDefaults()
        defaults.disablesShrinkOnLoad = true
        let off = VariantParameters(request: try ProcessingRequest(path: path, defaults: defaults), accept: nil)
        #expect(off.context.thumbnailPixelSize == nil && off.context.transformer?.key == on.context.transformer?.key)
    }

    /// `IMGPROXY_ALLOWED_SOURCES`: a source outside every pattern is 404 and never fetched.
    @Test func aSourceOutsideTheAllowedPatternsIs404() async throws {
        let fixture = try await ServerFixture { $0.allowedSources = ["https://cdn.example.com/"] }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        let refused = try await fixture.get("/insecure/w:50/plain/\(fixture.source("/photo.jpg"))")
        #expect(refused.status == 404 && fixture.sources.requestCount(for: "/photo.jpg") == 0)
        await fixture.stop()
        let allowing = try await ServerFixture { $0.allowedSources = ["http://127.0.0.1:*/"] }
        allowing.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: photo))
        #expect(try await allowing.get("/insecure/w:50/plain/\(allowing.source("/photo.jpg"))").status == 200)
        await allowing.stop()
    }
}
