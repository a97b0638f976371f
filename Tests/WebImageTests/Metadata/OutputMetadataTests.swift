import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageWebP

/// What outputs carry on request: an ICC profile and an EXIF copyright, written where each
/// container keeps them (read back by the same readers that find them in sources), the pixels
/// unchanged; and the manager's options that keep a source's profile and copyright in its variants.
@Suite struct OutputMetadataTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder(), AVIFCoder()])

    private static func adobeProfile() throws -> Data {
        try #require(ICCProfileReader.profile(in: try Data(contentsOf: fixtures.appendingPathComponent("adobe-rgb.jpg"))))
    }

    private static func picture(alpha: Bool) throws -> Image {
        let format: PixelFormat = alpha ? .rgba8 : .rgb8
        let bytes = (0..<(24 * 16)).flatMap { index -> [UInt8] in
            let pixel = [UInt8(index % 24 * 10), UInt8(index / 24 * 15), 90]
            return alpha ? pixel + [UInt8(128 + index % 100)] : pixel
        }
        return try Image(width: 24, height: 16, pixelFormat: format, pixels: bytes)
    }

    @Test(arguments: [(ImageFormat.jpeg, false), (.png, false), (.png, true), (.webp, false), (.webp, true), (.avif, false)])
    func aProfileAndACopyrightAreWrittenAndReadBack(_ format: ImageFormat, _ alpha: Bool) throws {
        let profile = try Self.adobeProfile()
        let image = try Self.picture(alpha: alpha)
        let plain = try Self.coders.encode(image, as: format, options: EncodeOptions(isLossless: true))
        let tagged = try Self.coders.encode(image, as: format, options: EncodeOptions(isLossless: true, colorProfile: profile,
                                                                                     copyright: "© 2026 WebImage test"))
        #expect(ICCProfileReader.profile(in: plain) == nil)
        #expect(ICCProfileReader.profile(in: tagged) == profile, "\(format): the profile reads back whole")
        if format != .avif {   // AVIF's Exif item is not read by EXIFBlock (sources' copyrights come from JPEG, PNG, WebP)
            #expect(EXIFCopyright.copyright(in: tagged) == "© 2026 WebImage test", "\(format): the copyright reads back")
            #expect(EXIFCopyright.copyright(in: plain) == nil)
        } else {
            #expect(tagged.range(of: Data("Exif".utf8)) != nil, "AVIF: an Exif item is written")
        }
        let decodedPlain = try Self.coders.decode(plain), decodedTagged = try Self.coders.decode(tagged)
        #expect(decodedTagged.size == image.size && decodedTagged.pixels == decodedPlain.pixels, "\(format): the pixels are the same")
    }

    @Test func aLongProfileIsSplitOverSeveralJPEGSegmentsAndJoinedBack() throws {
        var profile = try Self.adobeProfile()
        profile += Data((0..<150_000).map { UInt8($0 % 251) })   // not a valid profile: only its bytes matter here
        let tagged = try Self.coders.encode(try Self.picture(alpha: false), as: .jpeg, options: EncodeOptions(colorProfile: profile))
        #expect(ICCProfileReader.profile(in: tagged) == profile)
        #expect(try Self.coders.decode(tagged).size == PixelSize(width: 24, height: 16))
    }

    @Test func theEXIFBlockHoldsTheCopyrightAlone() throws {
        let tiff = EXIFCopyright.tiff(copyright: "ab")   // short text: inline in the entry
        let long = EXIFCopyright.tiff(copyright: "a longer notice")
        for (block, text) in [(tiff, "ab"), (long, "a longer notice")] {
            let read = block.withUnsafeBytes { bytes -> String? in
                guard let reader = TIFFReader(tiff: bytes), let entry = reader.ifd0Entry(tag: 0x8298) else { return nil }
                return reader.ascii(ofEntryAt: entry)
            }
            #expect(read == text)
            #expect(block.withUnsafeBytes { TIFFReader(tiff: $0)?.uint16(at: 8) } == 1, "one entry in IFD0")
        }
    }

    @Test func damagedEXIFBlocksReadAsNoCopyright() throws {
        var truncated = EXIFCopyright.tiff(copyright: "a longer notice")
        truncated.removeLast(8)
        let jpeg = MetadataEmbedder.embed(colorProfile: nil, exif: truncated, in: try Self.coders.encode(try Self.picture(alpha: false), as: .jpeg),
                                          format: .jpeg, canvas: PixelSize(width: 24, height: 16), hasAlpha: false)
        #expect(EXIFCopyright.copyright(in: jpeg) == nil, "a value past the block's end is not read")
        #expect(EXIFCopyright.copyright(in: Data([0xFF, 0xD8, 0xFF, 0xE1, 0x00])) == nil)
        #expect(EXIFCopyright.copyright(in: Data("not an image".utf8)) == nil)
    }

    // MARK: The manager

    @Test func variantsKeepTheSourceProfileOnlyWhenAsked() async throws {
        let server = try TestHTTPServer()
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("adobe-rgb.jpg"))
        server.route("/a.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: data))
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/a.jpg")
        let converted = try await fixture.manager.loadVariant(url: url, format: .exactly(.png))
        let kept = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), options: .preserveColorProfile)
        #expect(ICCProfileReader.profile(in: converted.data) == nil, "sRGB pixels, no profile")
        #expect(ICCProfileReader.profile(in: kept.data) == (try Self.adobeProfile()), "the file's pixels with the file's profile")
        #expect(kept.entityTag != converted.entityTag)
        #expect(try Self.coders.decode(kept.data).pixels == (try Self.coders.decode(data)).pixels)
        #expect(try Self.coders.decode(converted.data).pixels == (try Self.coders.decode(data, options: DecodeOptions(convertsToSRGB: true))).pixels)
        #expect(fixture.manager.variantCacheKey(for: url, format: .exactly(.png), options: .preserveColorProfile)
                != fixture.manager.variantCacheKey(for: url, format: .exactly(.png)))
    }

    @Test func variantsKeepTheSourceCopyrightAloneWhenAsked() async throws {
        let server = try TestHTTPServer()
        let source = try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/broken_exif_dpi.jpg"))
        #expect(EXIFCopyright.copyright(in: source) == "Ross_Pushinaitis", "the corpus file's own EXIF copyright")
        server.route("/c.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: source))
        let fixture = ManagerFixture(coders: Self.coders)
        let url = server.url("/c.jpg")
        for format in [ImageFormat.jpeg, .png, .webp] {
            let plain = try await fixture.manager.loadVariant(url: url, format: .exactly(format))
            let kept = try await fixture.manager.loadVariant(url: url, format: .exactly(format), options: .preserveCopyright)
            #expect(EXIFCopyright.copyright(in: plain.data) == nil && plain.data.range(of: Data("Exif".utf8)) == nil)
            #expect(EXIFCopyright.copyright(in: kept.data) == "Ross_Pushinaitis", "\(format)")
            let block = kept.data.withUnsafeBytes { EXIFBlock.tiff(in: $0).map { Array($0) } }
            #expect(block == EXIFCopyright.tiff(copyright: "Ross_Pushinaitis"), "\(format): the copyright is the only EXIF field")
        }
    }
}
