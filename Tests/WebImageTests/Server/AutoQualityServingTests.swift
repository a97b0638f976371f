import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy Pro's `autoquality` and `format:best`, seen over HTTP: the answers' bytes, formats and
/// headers, the server's `IMGPROXY_*` settings, and refusals.
@Suite struct AutoQualityServingTests {
    func fixture(_ configure: @escaping (inout ImageServerConfig) -> Void = { _ in }) async throws -> ServerFixture {
        let fixture = try await ServerFixture(configure: configure)
        for (name, picture) in [("flat", try QualityPictures.flat()), ("grainy", try QualityPictures.grainy())] {
            fixture.sources.route("/\(name).png", TestResponse(headers: [("Content-Type", "image/png")],
                                                               body: try ServerFixture.coders.encode(picture, as: .png)))
        }
        return fixture
    }

    /// The DSSIM of an answer against the source it was encoded from (no resizing asked).
    func difference(_ body: Data, from picture: Image) throws -> Double {
        try DSSIM.difference(between: picture, and: ServerFixture.coders.decode(body))
    }

    @Test func dssimPicksAQualityPerPictureWithinTheRange() async throws {
        let fixture = try await fixture()
        let flat = fixture.source("/flat.png"), grainy = fixture.source("/grainy.png")
        let fixed = try await fixture.get("/insecure/q:95/plain/\(flat)@jpg")
        let auto = try await fixture.get("/insecure/aq:dssim:0.004:10:95:0/plain/\(flat)@jpg")
        #expect(fixed.status == 200 && auto.status == 200 && auto.header("Content-Type") == "image/jpeg")
        #expect(auto.body.count < fixed.body.count, "the flat picture needs less than quality 95: \(auto.body.count) of \(fixed.body.count)")
        #expect(try difference(auto.body, from: QualityPictures.flat()) <= 0.004)
        let atDefault = try await fixture.get("/insecure/plain/\(flat)@jpg")
        #expect(auto.body.count < atDefault.body.count, "below the fixed default, 80: \(auto.body.count) of \(atDefault.body.count)")
        let grainyAuto = try await fixture.get("/insecure/aq:dssim:0.004:10:95:0/plain/\(grainy)@jpg")
        let grainyFixed = try await fixture.get("/insecure/q:10/plain/\(grainy)@jpg")
        #expect(grainyAuto.body.count > grainyFixed.body.count, "the grainy picture needs more than quality 10")
        #expect(try difference(grainyAuto.body, from: QualityPictures.grainy()) <= 0.004)
        let scored = try await fixture.get("/insecure/aq:ssimulacra2:80:10:95/plain/\(grainy)@jpg")
        let kept = try SSIMULACRA2.score(of: ServerFixture.coders.decode(scored.body), against: QualityPictures.grainy())
        #expect(scored.status == 200 && kept >= 79.5, "WebImage's own method: a score kept, \(kept)")
        let ml = try await fixture.get("/insecure/autoquality:ml:0.004:10:95:0/plain/\(flat)@jpg")
        #expect(ml.body == auto.body, "ml without a model is dssim, as imgproxy")
        let again = try await fixture.get("/insecure/aq:dssim:0.004:10:95:0/plain/\(flat)@jpg")
        #expect(again.body == auto.body && again.header("ETag") == auto.header("ETag"), "warm: the same answer")
        let other = try await fixture.get("/insecure/aq:dssim:0.03:10:95:0/plain/\(flat)@jpg")
        #expect(other.header("ETag") != auto.header("ETag"), "another target is another variant")
        await fixture.stop()
    }

    @Test func sizeKeepsTheHighestQualityThatFits() async throws {
        let fixture = try await fixture()
        let grainy = fixture.source("/grainy.png")
        let atSixty = try await fixture.get("/insecure/q:60/plain/\(grainy)@webp")
        let fitted = try await fixture.get("/insecure/aq:size:\(atSixty.body.count):10:95/plain/\(grainy)@webp")
        #expect(fitted.status == 200 && fitted.body.count <= atSixty.body.count && fitted.body.count > atSixty.body.count * 9 / 10,
                "\(fitted.body.count) of \(atSixty.body.count)")
        let none = try await fixture.get("/insecure/aq:none/q:60/plain/\(grainy)@webp")
        #expect(none.body == atSixty.body, "none: the fixed quality")
        let png = try await fixture.get("/insecure/aq:size:100/plain/\(grainy)@png")
        #expect(png.status == 200 && png.body.count > 100, "PNG has no quality: nothing is searched")
        await fixture.stop()
    }

    @Test func theServersSettingsApplyToEveryURL() async throws {
        let configured = try await fixture { $0.processingDefaults.autoQuality.method = .dssim }
        let plain = try await configured.get("/insecure/plain/\(configured.source("/flat.png"))@jpg")
        await configured.stop()
        let asked = try await fixture()
        let explicit = try await asked.get("/insecure/aq:dssim/plain/\(asked.source("/flat.png"))@jpg")
        let fixed = try await asked.get("/insecure/plain/\(asked.source("/flat.png"))@jpg")
        #expect(plain.status == 200 && plain.body == explicit.body && plain.body != fixed.body)
        await asked.stop()
    }

    @Test func aServerWithSettingsThatCannotBeSearchedDoesNotStart() {
        var config = ImageServerConfig(port: 0, signing: .unsigned)
        config.processingDefaults.autoQuality.method = .size   // its target is still the DSSIM default, 0.02
        #expect(throws: ServerError.self) { try ImageServer(manager: WebImageManager(), config: config) }
    }

    @Test func badSettingsAreRefused() async throws {
        let fixture = try await fixture()
        let flat = fixture.source("/flat.png")
        for options in ["aq:fast", "aq:size", "aq:dssim::90:80", "aq:dssim:0.02:70:80:2", "aq:dssim:x", "aq:ssimulacra2", "aq:ssimulacra2:101"] {
            let reply = try await fixture.get("/insecure/\(options)/plain/\(flat)@jpg")
            #expect(reply.status == 400, "\(options): \(reply.status)")
        }
        await fixture.stop()
    }

    @Test func bestIsTheSmallestAcceptableFormat() async throws {
        let fixture = try await fixture { $0.autoFormats = [.webp, .avif] }
        let flat = fixture.source("/flat.png"), grainy = fixture.source("/grainy.png")
        let accept = ["Accept": "image/avif,image/webp,*/*"]
        let best = try await fixture.get("/insecure/f:best/plain/\(flat)", headers: accept)
        #expect(best.status == 200 && best.header("Vary") == "Accept")
        var sizes: [Int] = []
        for format in ["jpg", "png", "webp", "avif"] {
            sizes.append(try await fixture.get("/insecure/plain/\(flat)@\(format)").body.count)
        }
        #expect(best.body.count <= sizes.min()!, "\(best.header("Content-Type") ?? ""): \(best.body.count) against \(sizes)")
        let byExtension = try await fixture.get("/insecure/plain/\(flat)@best", headers: accept)
        #expect(byExtension.body == best.body)
        let jpegOnly = try await fixture.get("/insecure/f:best/plain/\(grainy)")
        #expect(jpegOnly.header("Content-Type") == "image/jpeg", "a grainy picture, no modern format accepted: JPEG")
        await fixture.stop()
        let byDefault = try await self.fixture { $0.bestFormat.isDefault = true }
        let unnamed = try await byDefault.get("/insecure/plain/\(byDefault.source("/flat.png"))")
        let named = try await byDefault.get("/insecure/plain/\(byDefault.source("/flat.png"))@jpg")
        #expect(unnamed.header("Content-Type") == "image/png" && named.header("Content-Type") == "image/jpeg",
                "BEST_FORMAT_BY_DEFAULT: a flat picture is smallest as PNG among JPEG, PNG and GIF")
        await byDefault.stop()
    }
}
