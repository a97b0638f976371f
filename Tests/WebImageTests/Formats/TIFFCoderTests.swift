import Foundation
import Testing
@testable import WebImage
@testable import WebImageTIFF

@Suite struct TIFFCoderTests {
    @Test func everyCorpusTIFFMatchesItsReferenceAndEveryBadOneIsRefused() async throws {
        let result = try await CorpusConformance.mismatches(format: "TIFF", coder: TIFFCoder())
        #expect(result.valid >= 10 && result.invalid >= 5)
        #expect(result.problems.isEmpty, "\(result.problems.joined(separator: "\n"))")
    }

    @Test func everyPageOfTheMultiPageFilesMatches() async throws {
        let result = try await CorpusConformance.frameMismatches(prefix: "tiff/", coder: TIFFCoder(), pages: true)
        #expect(result.files >= 3)
        #expect(result.problems.isEmpty, "\(result.problems.joined(separator: "\n"))")
    }

    /// A little-endian TIFF whose one IFD declares `width` × `height` 8-bit grey pixels in one strip of `stripBytes`.
    static func tiff(width: UInt32, height: UInt32, stripBytes: UInt32 = 1) -> Data {
        var bytes: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        let entries: [(UInt16, UInt16, UInt32)] = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 1),
                                                   (273, 4, 8 + 2 + 8 * 12 + 4), (278, 4, height), (279, 4, stripBytes)]
        func le16(_ v: UInt16) { bytes += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func le32(_ v: UInt32) { for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((v >> UInt32(shift)) & 0xFF)) } }
        le16(UInt16(entries.count))
        for (tag, type, value) in entries {
            le16(tag); le16(type); le32(1)
            if type == 3 { le16(UInt16(value)); le16(0) } else { le32(value) }
        }
        le32(0)
        bytes += [UInt8](repeating: 0x80, count: Int(stripBytes))
        return Data(bytes)
    }

    @Test func bombsAndDamageAreTypedErrorsBeforeAllocating() throws {
        #expect(throws: ImageCodingError.imageTooLarge(width: 100_000, height: 100_000, limit: DecodeOptions.defaultPixelCountLimit)) {
            try TIFFCoder().decode(Self.tiff(width: 100_000, height: 100_000))
        }
        let small = Self.tiff(width: 4, height: 4, stripBytes: 16)
        #expect(try TIFFCoder().decode(small).size == PixelSize(width: 4, height: 4))
        #expect(throws: ImageCodingError.self, "a strip cut short") { try TIFFCoder().decode(small.prefix(small.count - 6)) }
        #expect(throws: ImageCodingError.self) { try TIFFCoder().decode(small.prefix(20)) }
        #expect(throws: ImageCodingError.pageNotFound(page: 3, pageCount: 1)) {
            var options = DecodeOptions()
            options.page = 3
            return try TIFFCoder().decode(small, options: options)
        }
        #expect(try TIFFCoder().pageCount(of: small) == 1)
        #expect(throws: ImageCodingError.unsupportedFormat(.png)) { try TIFFCoder().decode(try encodedPicture()) }
    }

    @Test func theOrientationTagTurnsThePageAsEXIFDoes() throws {
        let entry = try #require(Corpus.entries(format: "TIFF").first { $0.valid && ($0.exifOrientation ?? 1) != 1 && $0.orientedRGBASHA256 != nil })
        let stored = try TIFFCoder().decode(try entry.data, options: DecodeOptions(applyOrientation: false))
        #expect(stored.orientation == ImageOrientation(exifValue: entry.exifOrientation ?? 1))
        #expect(try TIFFCoder().decode(try entry.data).rgbaSHA256() == entry.orientedRGBASHA256)
    }

    @Test func everyPixelFormatRoundTripsLosslesslyAndTheProfileTravels() throws {
        for format in PixelFormat.eightBitFormats {
            let width = 37, height = 23
            let pixels = (0..<(width * height * format.bytesPerPixel)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 11) }
            let image = try Image(width: width, height: height, pixelFormat: format, pixels: pixels)
            let data = try TIFFCoder().encode(image, as: .tiff)
            #expect(ImageFormat(sniffing: data) == .tiff)
            let back = try TIFFCoder().decode(data)
            #expect(back.pixelFormat == format && back.size == image.size, "\(format)")
            #expect(back.rgbaSHA256() == image.rgbaSHA256(), "\(format)")
        }
        // An Adobe RGB profile written into the file converts its pixels when read back for a server (a
        // mid colour: pure green is outside sRGB and would clip to itself).
        let adobe = try #require(ICCProfileReader.profile(in: try Data(contentsOf: Corpus.packageRoot
            .appendingPathComponent("Tests/WebImageTests/Fixtures/adobe-rgb.jpg"))))
        let green = try Image(width: 2, height: 2, pixelFormat: .rgb8, pixels: (0..<12).map { [UInt8(60), 160, 90][$0 % 3] })
        let tagged = try TIFFCoder().encode(green, as: .tiff, options: EncodeOptions(colorProfile: adobe))
        var toSRGB = DecodeOptions()
        toSRGB.convertsToSRGB = true
        #expect(try TIFFCoder().decode(tagged).rgbaSHA256() == green.rgbaSHA256(), "the file's own pixels")
        #expect(try TIFFCoder().decode(tagged, options: toSRGB).rgbaSHA256() != green.rgbaSHA256(), "Adobe RGB green is not sRGB green")
        #expect(throws: ImageCodingError.self) { try TIFFCoder().encode(green, as: .png) }
    }
}
