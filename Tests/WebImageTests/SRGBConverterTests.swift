import Foundation
import Testing
@testable import WebImage

/// Embedded ICC profiles: found in JPEG, PNG and WebP bytes, converted to sRGB with Little CMS only
/// when asked (the corpus checksums decode without it), and checked pixel by pixel against Pillow's
/// ImageCms (Little CMS too) on a JPEG with an Adobe RGB profile.
@Suite struct SRGBConverterTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    @Test func profilesAreFoundInJPEGPNGAndWebP() throws {
        let adobe = try Data(contentsOf: Self.fixtures.appendingPathComponent("adobe-rgb.jpg"))
        let profile = try #require(ICCProfileReader.profile(in: adobe))
        #expect(profile.count == 580 && String(decoding: profile[36..<40], as: UTF8.self) == "acsp", "the whole 580-byte profile")
        let big = try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/icc_profile_big.jpg"))
        #expect((ICCProfileReader.profile(in: big)?.count ?? 0) > 65_000, "a profile split over several APP2 segments is joined")
        let afterSOF = try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/icc-after-SOF.jpg"))
        #expect(ICCProfileReader.profile(in: afterSOF) != nil, "a profile after the frame header is still before the scan")
        let png = try Data(contentsOf: Corpus.root.appendingPathComponent("png/valid/pillow/icc_profile.png"))
        let pngProfile = try #require(ICCProfileReader.profile(in: png), "iCCP is inflated")
        #expect(String(decoding: pngProfile[36..<40], as: UTF8.self) == "acsp", "an ICC header's signature")
        #expect(ICCProfileReader.profile(in: try Data(contentsOf: Corpus.root.appendingPathComponent("png/valid/pngsuite/basn6a08.png"))) == nil)
        var webp = Data("RIFF".utf8) + Data([0, 0, 0, 0]) + Data("WEBP".utf8)
        webp += Data("VP8X".utf8) + Data([10, 0, 0, 0]) + Data(count: 10)
        webp += Data("ICCP".utf8) + Data([4, 0, 0, 0]) + Data([1, 2, 3, 4])
        #expect(ICCProfileReader.profile(in: webp) == Data([1, 2, 3, 4]))
        var broken = [UInt8](adobe)
        broken.removeSubrange(20..<200)   // cuts into the APP2 segment
        #expect(ICCProfileReader.profile(in: Data(broken)) == nil)
    }

    @Test func anAdobeRGBJPEGConvertsToTheSRGBLittleCMSMakesOfIt() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("adobe-rgb.jpg"))
        let reference = try CoderRegistry.shared.decode(try Data(contentsOf: Self.fixtures.appendingPathComponent("adobe-rgb-as-srgb.png")))
        let raw = try CoderRegistry.shared.decode(data)
        let converted = try CoderRegistry.shared.decode(data, options: DecodeOptions(convertsToSRGB: true))
        #expect(converted.size == reference.size && converted.pixelFormat == .rgb8)
        let ours = [UInt8](converted.pixels), theirs = [UInt8](reference.pixels), before = [UInt8](raw.pixels)
        let differences = zip(ours, theirs).map { abs(Int($0) - Int($1)) }
        #expect(differences.max() ?? 0 <= 2, "within 2 of Pillow's ImageCms in every channel (max \(differences.max() ?? 0))")
        let moved = zip(ours, before).map { abs(Int($0) - Int($1)) }.reduce(0, +) / ours.count
        #expect(moved >= 4, "the conversion changed the pixels (mean \(moved))")
    }

    @Test func withoutTheOptionThePixelsAreTheFilesOwn() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("adobe-rgb.jpg"))
        let plain = try CoderRegistry.shared.decode(data)
        let again = try CoderRegistry.shared.decode(data, options: DecodeOptions(convertsToSRGB: false))
        #expect(plain.pixels == again.pixels)
    }

    @Test func theManagerConvertsByDefaultAndKeepsThePixelsWhenAsked() async throws {
        let server = try TestHTTPServer()
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("adobe-rgb.jpg"))
        server.route("/a.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: data))
        server.route("/b.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: data))
        let fixture = ManagerFixture()
        let converted = try await fixture.manager.loadImage(url: server.url("/a.jpg"))
        let kept = try await fixture.manager.loadImage(url: server.url("/b.jpg"), options: .preserveColorProfile)
        #expect(converted.image.pixels == (try CoderRegistry.shared.decode(data, options: DecodeOptions(convertsToSRGB: true))).pixels)
        #expect(kept.image.pixels == (try CoderRegistry.shared.decode(data)).pixels)
        let variant = try await fixture.manager.loadVariant(url: server.url("/a.jpg"), format: .exactly(.png))
        #expect(variant.data.range(of: Data("iCCP".utf8)) == nil, "the output carries no profile")
    }
}
