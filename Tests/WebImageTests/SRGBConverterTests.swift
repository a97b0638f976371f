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

    /// Our decode against Pillow's ImageCms on the same file: within 2 per channel, and moved from
    /// the plain decode by at least `minimumMove` on average. Gray results are compared with the
    /// reference's green channel.
    private func expectConverted(_ name: String, minimumMove: Int) throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("\(name).jpg"))
        let reference = try CoderRegistry.shared.decode(try Data(contentsOf: Self.fixtures.appendingPathComponent("\(name)-as-srgb.png")))
        let raw = try CoderRegistry.shared.decode(data)
        let converted = try CoderRegistry.shared.decode(data, options: DecodeOptions(convertsToSRGB: true))
        #expect(converted.size == reference.size && converted.pixelFormat == raw.pixelFormat)
        let step = converted.pixelFormat.bytesPerPixel
        let theirs = [UInt8](reference.pixels).enumerated().compactMap { index, value in
            step == 1 ? (index % 3 == 1 ? value : nil) : value   // gray: the reference's green channel
        }
        let ours = [UInt8](converted.pixels), before = [UInt8](raw.pixels)
        let differences = zip(ours, theirs).map { abs(Int($0) - Int($1)) }
        #expect(ours.count == theirs.count)
        #expect(differences.max() ?? 0 <= 2, "\(name): within 2 of Pillow's ImageCms in every channel (max \(differences.max() ?? 0))")
        let moved = zip(ours, before).map { abs(Int($0) - Int($1)) }.reduce(0, +) / ours.count
        #expect(moved >= minimumMove, "\(name): the conversion changed the pixels (mean \(moved))")
    }

    @Test func aCMYKJPEGIsConvertedFromItsCMYKSamplesWithItsProfile() throws {
        try expectConverted("cmyk-profile", minimumMove: 3)
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("cmyk-profile.jpg"))
        let thumbnail = try CoderRegistry.shared.decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 24, height: 24),
                                                                                        convertsToSRGB: true))
        let plainThumbnail = try CoderRegistry.shared.decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 24, height: 24)))
        #expect(thumbnail.size == PixelSize(width: 24, height: 16) && thumbnail.pixels != plainThumbnail.pixels,
                "a DCT-scaled decode converts its CMYK rows too")
    }

    @Test func aGrayJPEGWithAGrayProfileGetsTheSRGBToneCurve() throws {
        try expectConverted("gray-linear", minimumMove: 30)
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
        let fixture = ManagerFixture()
        let converted = try await fixture.manager.loadImage(url: server.url("/a.jpg"), options: .waitStoreCache)
        let kept = try await fixture.manager.loadImage(url: server.url("/a.jpg"), options: .preserveColorProfile)
        let convertedAgain = try await fixture.manager.loadImage(url: server.url("/a.jpg"))
        let srgbPixels = try CoderRegistry.shared.decode(data, options: DecodeOptions(convertsToSRGB: true)).pixels
        let filePixels = try CoderRegistry.shared.decode(data).pixels
        #expect(converted.image.pixels == srgbPixels)
        #expect(kept.image.pixels == filePixels, "the same URL with the option: its own cache entry, not the sRGB pixels")
        #expect(convertedAgain.cacheType == .memory && convertedAgain.image.pixels == srgbPixels,
                "and the sRGB entry is not replaced by the file's pixels")
        #expect(fixture.manager.cacheKey(for: server.url("/a.jpg"), options: .preserveColorProfile)
                != fixture.manager.cacheKey(for: server.url("/a.jpg")))
        let thumbnail = WebImageContext(thumbnailPixelSize: PixelSize(width: 48, height: 48))
        let thumbnailConverted = try await fixture.manager.loadImage(url: server.url("/a.jpg"), context: thumbnail)
        let thumbnailKept = try await fixture.manager.loadImage(url: server.url("/a.jpg"), options: .preserveColorProfile, context: thumbnail)
        #expect(thumbnailConverted.image.pixels != thumbnailKept.image.pixels,
                "a thumbnail derived from the original in memory is not made from the sRGB pixels when the file's are asked for")
        #expect(server.requestCount(for: "/a.jpg") == 1, "one download: the preserved pixels come from the original's stored bytes")
        let variant = try await fixture.manager.loadVariant(url: server.url("/a.jpg"), format: .exactly(.png))
        #expect(variant.data.range(of: Data("iCCP".utf8)) == nil, "the output carries no profile")
    }
}
