import Foundation
import Testing
@testable import WebImage

@Suite struct BMPCoderTests {
    @Test func everyCorpusBitmapMatchesItsReferenceAndEveryBadOneIsRefused() async throws {
        let result = try await CorpusConformance.mismatches(format: "BMP", coder: BMPCoder())
        #expect(result.valid >= 15 && result.invalid >= 10)
        #expect(result.problems.isEmpty, "\(result.problems.joined(separator: "\n"))")
    }

    /// A BMP file header and a 40-byte info header for `width` × `height` (negative: top-down) at `bits`
    /// with `compression`, followed by `payload` (palette and pixels).
    static func bitmap(width: Int32, height: Int32, bits: UInt16 = 24, compression: UInt32 = 0, payload: [UInt8] = []) -> Data {
        var bytes: [UInt8] = Array("BM".utf8)
        func le(_ value: UInt32, _ count: Int) { for index in 0..<count { bytes.append(UInt8((value >> UInt32(8 * index)) & 0xFF)) } }
        let paletteBytes = bits <= 8 ? 4 << Int(bits) : 0
        le(UInt32(54 + payload.count), 4); le(0, 4); le(UInt32(54 + paletteBytes), 4)
        le(40, 4); le(UInt32(bitPattern: width), 4); le(UInt32(bitPattern: height), 4); le(1, 2); le(UInt32(bits), 2)
        le(compression, 4); le(0, 4); le(2835, 4); le(2835, 4); le(0, 4); le(0, 4)
        return Data(bytes + payload)
    }

    @Test func bombsRunsPastTheImageAndCutFilesAreTypedErrors() {
        #expect(throws: ImageCodingError.self, "100 000 × 100 000 declared") {
            try BMPCoder().decode(Self.bitmap(width: 100_000, height: 100_000, payload: [0, 0, 0, 0]))
        }
        #expect(throws: ImageCodingError.imageTooLarge(width: 300, height: 300, limit: 1000)) {
            try BMPCoder().decode(Self.bitmap(width: 300, height: 300, payload: [0, 0, 0, 0]), options: DecodeOptions(pixelCountLimit: 1000))
        }
        #expect(throws: ImageCodingError.self, "Int32.min rows") { try BMPCoder().decode(Self.bitmap(width: 1, height: .min)) }
        // RLE8, 2 × 2: a palette of 256 entries, then a run of 200 pixels on a row of 2.
        let palette = [UInt8](repeating: 0, count: 1024)
        #expect(throws: ImageCodingError.self, "an RLE run past the row") {
            try BMPCoder().decode(Self.bitmap(width: 2, height: 2, bits: 8, compression: 1, payload: palette + [200, 1, 0, 1]))
        }
        let good = Self.bitmap(width: 2, height: 2, payload: [UInt8](repeating: 9, count: 16))
        #expect(throws: ImageCodingError.truncatedData(format: .bmp)) { try BMPCoder().decode(good.prefix(good.count - 5)) }
        #expect((try? BMPCoder().decode(good).size) == PixelSize(width: 2, height: 2))
    }

    @Test func everyPixelFormatRoundTripsThroughTheEncoder() throws {
        for format in PixelFormat.eightBitFormats {
            let width = 13, height = 7
            let pixels = (0..<(width * height * format.bytesPerPixel)).map { UInt8(truncatingIfNeeded: $0 &* 37) }
            let image = try Image(width: width, height: height, pixelFormat: format, pixels: pixels)
            let data = try BMPCoder().encode(image, as: .bmp)
            #expect(ImageFormat(sniffing: data) == .bmp)
            let back = try BMPCoder().decode(data)
            #expect(back.rgbaSHA256() == image.rgbaSHA256() && back.pixelFormat.hasAlpha == format.hasAlpha, "\(format)")
        }
    }
}

@Suite struct ICOCoderTests {
    @Test func everyCorpusIconMatchesItsReferenceAndEveryBadOneIsRefused() async throws {
        let result = try await CorpusConformance.mismatches(format: "ICO", coder: ICOCoder())
        #expect(result.valid >= 15 && result.invalid >= 3)
        #expect(result.problems.isEmpty, "\(result.problems.joined(separator: "\n"))")
    }

    @Test func theEntryNearestASizeCanBeAskedFor() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("ico/valid/pillow/python.ico"))
        // The manifest's notes list every entry: 16, 32 and 48 pixels.
        let expected = [16: "8f307041b5cb184d4173a74f75b827c0c433ff0bf958173cb59fc20cd9a741d9",
                        32: "7dbc251f859c762c7cc423a360d2b592476703125d91cf91f538bc42b9cecc56",
                        48: "605514ba0251fd68f1f39de75d6e4df7039f4ca29c5d5ff2f325ac03db734e50"]
        #expect(try ICOCoder().decode(data).rgbaSHA256() == expected[48], "the largest by default")
        for (asked, side) in [(1, 16), (16, 16), (20, 32), (32, 32), (40, 48), (500, 48)] {
            var options = DecodeOptions()
            options.iconSide = asked
            let image = try ICOCoder().decode(data, options: options)
            #expect(image.width == side && image.rgbaSHA256() == expected[side], "asked \(asked)")
        }
    }

    @Test func aDirectoryPointingOutsideTheFileIsRefused() {
        // One entry, 16 × 16, 32-bit, 1 000 bytes at offset 70 000 in a 22-byte file.
        let directory: [UInt8] = [0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0, 0xE8, 3, 0, 0, 0x70, 0x11, 1, 0]
        #expect(throws: ImageCodingError.self) { try ICOCoder().decode(Data(directory)) }
    }

    @Test func anIconIsWrittenAtMost256PixelsWithItsAlpha() throws {
        let clear = try Image(width: 300, height: 150, pixelFormat: .rgba8, pixels: (0..<(300 * 150 * 4)).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let data = try ICOCoder().encode(clear, as: .ico)
        #expect(ImageFormat(sniffing: data) == .ico)
        let back = try ICOCoder().decode(data)
        #expect(back.size == PixelSize(width: 256, height: 128) && back.pixelFormat.hasAlpha && back.format == .ico)
        let small = try Image(width: 16, height: 16, pixelFormat: .gray8, pixels: [UInt8](repeating: 90, count: 256))
        #expect(try ICOCoder().decode(try ICOCoder().encode(small, as: .ico)).rgbaSHA256() == small.rgbaSHA256())
    }
}
