import Foundation
import Testing
@testable import WebImage

@Suite struct PNGCoderTests {
    let coder = PNGCoder()

    // MARK: Corpus

    /// Decodes and hashes off the cooperative pool (`DecodedForTest`), which it would otherwise hold for seconds.
    @Test func everyValidCorpusPNGMatchesItsChecksum() async throws {
        let entries = Corpus.entries(format: "PNG").filter { $0.valid && $0.expectedRGBASHA256 != nil }
        #expect(entries.count > 300, "the PNG fixtures look incomplete: \(entries.count) files with checksums")
        var mismatches: [String] = []
        for entry in entries {
            do {
                // The manifest's checksum is of the stored pixels, before any eXIf orientation.
                let decoded = try await DecodedForTest.decode(try entry.data, with: coder, options: DecodeOptions(applyOrientation: false))
                let (image, checksum) = (decoded.image, decoded.checksum)
                if checksum != entry.expectedRGBASHA256 {
                    mismatches.append("\(entry.path): sha256 \(checksum), expected \(entry.expectedRGBASHA256 ?? "-")")
                } else if let width = entry.width, let height = entry.height,
                          image.width != width || image.height != height {
                    mismatches.append("\(entry.path): \(image.size), expected \(width)x\(height)")
                }
            } catch {
                mismatches.append("\(entry.path): threw \(error)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(entries.count) PNGs:\n\(mismatches.joined(separator: "\n"))")
    }

    @Test func everyInvalidCorpusPNGThrowsAnImageCodingError() throws {
        let entries = Corpus.entries(format: "PNG").filter { !$0.valid }
        #expect(entries.count > 40)
        var problems: [String] = []
        for entry in entries {
            do {
                _ = try coder.decode(try entry.data, options: DecodeOptions())
                if !entry.referenceOnlyWarns {
                    problems.append("\(entry.path): decoded, but the reference decoder refuses it")
                }
            } catch is ImageCodingError {
                // Refused with a typed error, as required.
            } catch {
                problems.append("\(entry.path): threw a \(type(of: error)), not an ImageCodingError: \(error)")
            }
        }
        #expect(problems.isEmpty, "\(problems.count) invalid PNGs:\n\(problems.joined(separator: "\n"))")
    }

    @Test func decodesToTheSmallestLosslessPixelFormat() throws {
        var mismatches: [String] = []
        // Animated PNGs' frames are composited canvases, always RGBA (APNGTests covers them).
        for entry in Corpus.entries(format: "PNG") where entry.valid && !entry.mode.contains("APNG") {
            guard let colorType = entry.mode.firstMatch(of: /ct=(\d)/).flatMap({ Int($0.1) }) else { continue }
            let transparent = entry.mode.contains("tRNS")
            let expected: PixelFormat = switch colorType {
            case 0: transparent ? .grayAlpha8 : .gray8
            case 4: .grayAlpha8
            case 2, 3: transparent ? .rgba8 : .rgb8
            default: .rgba8
            }
            let image = try coder.decode(try entry.data, options: DecodeOptions())
            if image.pixelFormat != expected {
                mismatches.append("\(entry.path) (\(entry.mode)): \(image.pixelFormat), expected \(expected)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test func textChunkDecompressionBombDecodesAsAnOrdinaryImage() throws {
        let entry = try #require(Corpus.entries.first { $0.path == "png/valid/pillow/png_decompression_dos.png" })
        let image = try coder.decode(try entry.data, options: DecodeOptions())
        #expect(image.size == PixelSize(width: 1, height: 1))
        #expect(image.rgbaSHA256() == entry.expectedRGBASHA256)
    }

    @Test func decodedImageRecordsFormatScaleAndOrientation() throws {
        let data = try Self.encodedSample(.rgb8, width: 5, height: 4)
        let image = try coder.decode(data, options: DecodeOptions(scale: 2))
        #expect(image.format == .png)
        #expect(image.scale == 2)
        #expect(image.orientation == .up)
        #expect(image.bytesPerRow == 5 * 3)
    }

    // MARK: Errors and limits

    @Test func truncatedDataThrowsTruncatedData() throws {
        let data = try Self.encodedSample(.rgba8, width: 64, height: 64)
        // Inside IHDR, halfway through the pixels, and everything but IEND.
        for length in [20, data.count / 2, data.count - 12] {
            #expect(throws: ImageCodingError.truncatedData(format: .png), "cut at \(length) of \(data.count)") {
                try coder.decode(data.prefix(length), options: DecodeOptions())
            }
        }
    }

    @Test func corruptDataThrowsCorruptDataWithLibpngsMessage() throws {
        var data = try Self.encodedSample(.gray8, width: 16, height: 16)
        data[data.count - 20] ^= 0xFF  // inside the IDAT data: its CRC no longer matches
        do {
            _ = try coder.decode(data, options: DecodeOptions())
            Issue.record("decoded a PNG with a damaged IDAT")
        } catch let ImageCodingError.corruptData(format, reason) {
            #expect(format == .png)
            #expect(reason.contains("CRC"), "reason: \(reason)")
        }
    }

    @Test func otherFormatsAreRefusedAsUnsupported() {
        let jpegStart = Data([0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0])
        #expect(!coder.canDecode(jpegStart))
        #expect(throws: ImageCodingError.unsupportedFormat(.jpeg)) {
            try coder.decode(jpegStart, options: DecodeOptions())
        }
    }

    @Test func headerDeclaring100000By100000PixelsThrowsImageTooLarge() throws {
        let data = Self.craftedPNG(width: 100_000, height: 100_000)
        #expect(coder.canDecode(data))
        #expect(throws: ImageCodingError.imageTooLarge(width: 100_000, height: 100_000,
                                                       limit: DecodeOptions.defaultPixelCountLimit)) {
            try coder.decode(data, options: DecodeOptions())
        }
        let incremental = coder.makeIncrementalDecoder(options: DecodeOptions())
        #expect(throws: ImageCodingError.self) { try incremental.append(data) }
        #expect(incremental.makePartialImage() == nil)
    }

    @Test func aSideLongerThanAMillionPixelsIsRefusedBeforeLibpngAllocatesItsRows() throws {
        // Within the pixel-count limit, but libpng's row buffers alone would take hundreds of MB.
        let data = Self.craftedPNG(width: 100_000_000, height: 1)
        #expect(throws: ImageCodingError.imageTooLarge(width: 100_000_000, height: 1, limit: DecodeOptions.defaultPixelCountLimit)) {
            try coder.decode(data, options: DecodeOptions())
        }
    }

    @Test func pixelCountLimitBelowTheImageSizeThrowsImageTooLarge() throws {
        let data = try Self.encodedSample(.rgb8, width: 40, height: 30)
        #expect(throws: ImageCodingError.imageTooLarge(width: 40, height: 30, limit: 1199)) {
            try coder.decode(data, options: DecodeOptions(pixelCountLimit: 1199))
        }
        #expect(try coder.decode(data, options: DecodeOptions(pixelCountLimit: 1200)).size.pixelCount == 1200)
    }

    // MARK: Thumbnails

    @Test func thumbnailDecodeHasTheSizeOutputSizePredicts() throws {
        let boxes = [PixelSize(width: 16, height: 16), PixelSize(width: 7, height: 20), PixelSize(width: 1, height: 1)]
        let entries = Corpus.entries(format: "PNG").filter { $0.valid }.prefix(40)
        for entry in entries {
            let data = try entry.data
            let full = try coder.decode(data, options: DecodeOptions())
            for box in boxes {
                let options = DecodeOptions(thumbnailPixelSize: box)
                let thumbnail = try coder.decode(data, options: options)
                #expect(thumbnail.size == options.outputSize(forSource: full.size), "\(entry.path) into \(box)")
                #expect(thumbnail.pixelFormat == full.pixelFormat)
            }
        }
        let limited = DecodeOptions(maxPixelCount: 100)
        let image = try coder.decode(try Self.encodedSample(.gray8, width: 50, height: 20), options: limited)
        #expect(image.size == limited.outputSize(forSource: PixelSize(width: 50, height: 20)))
        #expect(image.size.pixelCount <= 100)
    }

    // MARK: Encoding

    @Test(arguments: PixelFormat.eightBitFormats)
    func encodeThenDecodeIsExact(_ pixelFormat: PixelFormat) throws {
        let original = try Self.sampleImage(pixelFormat, width: 37, height: 23)
        for level in [0, 1, 6, 9] {
            let data = try coder.encode(original, as: .png, options: EncodeOptions(pngCompressionLevel: level))
            #expect(ImageFormat(sniffing: data) == .png)
            let decoded = try coder.decode(data, options: DecodeOptions())
            #expect(decoded.pixelFormat == pixelFormat)
            #expect(decoded.size == original.size)
            #expect(decoded.pixels == original.pixels, "level \(level)")
            // libpng reads it too (the decode above takes the libdeflate fast path).
            #expect(try PNGFastDecoderTests.libpngImage(data).pixels == original.pixels, "level \(level)")
            #expect(try PNGFastDecoderTests.fastImage(data) != nil, "level \(level)")
        }
    }

    @Test func aLargeImageIsWrittenAsIHDRThenIDATChunksOfAtMostOneMebibyteThenIEND() throws {
        var random = SplitMix(seed: 11)
        let noise = (0..<(700 * 700 * 3)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let original = try Image(width: 700, height: 700, pixelFormat: .rgb8, pixels: noise)
        let data = try coder.encode(original, as: .png, options: EncodeOptions(pngCompressionLevel: 3))
        var chunks: [(type: String, length: Int)] = []
        var offset = 8
        while offset + 12 <= data.count {
            let length = data[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            chunks.append((String(decoding: data[offset + 4..<offset + 8], as: UTF8.self), length))
            offset += length + 12
        }
        #expect(offset == data.count)
        #expect(chunks.map(\.type) == ["IHDR", "IDAT", "IDAT", "IEND"], "noise does not compress: 1.47 MB of rows in two chunks")
        #expect(chunks.allSatisfy { $0.length <= 1 << 20 })
        #expect(try PNGFastDecoderTests.libpngImage(data).pixels == original.pixels)
        #expect(try coder.decode(data).pixels == original.pixels)
    }

    @Test func encodeScalesDownToMaxPixelSizeKeepingTheAspectRatio() throws {
        let original = try Self.sampleImage(.rgba8, width: 200, height: 100)
        let data = try coder.encode(original, as: .png, options: EncodeOptions(maxPixelSize: 50))
        let decoded = try coder.decode(data, options: DecodeOptions())
        #expect(decoded.size == PixelSize(width: 50, height: 25))
        let untouched = try coder.decode(try coder.encode(original, as: .png, options: EncodeOptions(maxPixelSize: 200)),
                                         options: DecodeOptions())
        #expect(untouched.pixels == original.pixels)
    }

    @Test func encodesOnlyPNG() throws {
        #expect(coder.canEncode(.png))
        #expect(!coder.canEncode(.jpeg))
        let image = try Self.sampleImage(.rgb8, width: 2, height: 2)
        #expect(throws: ImageCodingError.unsupportedEncoding(format: .jpeg, pixelFormat: .rgb8)) {
            try coder.encode(image, as: .jpeg, options: EncodeOptions())
        }
    }

    // MARK: Helpers

    /// Pixels that exercise every byte value and differ from row to row.
    static func sampleImage(_ pixelFormat: PixelFormat, width: Int, height: Int, seed: UInt32 = 1) throws -> Image {
        var state = seed &* 2_654_435_761 | 1
        let bytes = (0..<(width * height * pixelFormat.bytesPerPixel)).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 17
            state ^= state << 5
            return UInt8(truncatingIfNeeded: state)
        }
        return try Image(width: width, height: height, pixelFormat: pixelFormat, pixels: bytes)
    }

    static func encodedSample(_ pixelFormat: PixelFormat, width: Int, height: Int, seed: UInt32 = 1) throws -> Data {
        try PNGCoder().encode(sampleImage(pixelFormat, width: width, height: height, seed: seed), as: .png,
                              options: EncodeOptions())
    }

    /// A well-formed PNG whose IHDR declares `width` × `height` RGB pixels, with a tiny IDAT.
    static func craftedPNG(width: UInt32, height: UInt32) -> Data {
        func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let typeAndBody = Array(type.utf8) + body
            return bigEndian(UInt32(body.count)) + typeAndBody + bigEndian(crc32(typeAndBody))
        }
        let header = bigEndian(width) + bigEndian(height) + [8, 2, 0, 0, 0]
        let emptyZlibStream: [UInt8] = [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]
        return Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header)
                    + chunk("IDAT", emptyZlibStream) + chunk("IEND", []))
    }

    /// CRC-32 (ISO-HDLC, as PNG chunks use).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    @Test func anEXIfChunkTurnsThePNGAsBrowsersDo() throws {
        let entry = try #require(Corpus.entries.first { $0.path == "png/valid/image-png/bugfixes/F-exif-chunk-early.png" })
        let data = try entry.data
        let stored = try PNGCoder().decode(data, options: DecodeOptions(applyOrientation: false))
        #expect(stored.orientation == ImageOrientation(exifValue: 6))
        #expect(stored.rgbaSHA256() == entry.expectedRGBASHA256)
        let upright = try PNGCoder().decode(data)
        #expect(upright.orientation == .up)
        #expect(upright.rgbaSHA256() == entry.orientedRGBASHA256)
        let incremental = PNGCoder().makeIncrementalDecoder(options: DecodeOptions())
        for start in stride(from: 0, to: data.count, by: 1024) { try incremental.append(data[start..<min(start + 1024, data.count)]) }
        #expect(try incremental.finish().rgbaSHA256() == upright.rgbaSHA256())
    }

    @Test func xmpOrientationIsIgnoredAsBrowsersIgnoreIt() throws {
        // Pillow's exif_transpose (the manifest's oriented reference) reads tiff:Orientation from XMP;
        // Chrome, Safari and Firefox do not, and a thumbnail must look like the original in a browser.
        let entry = try #require(Corpus.entries.first { $0.path == "png/valid/pillow/xmp_tags_orientation_exiftool.png" })
        let image = try PNGCoder().decode(try entry.data)
        #expect(image.orientation == .up)
        #expect(image.rgbaSHA256() == entry.expectedRGBASHA256)
    }
}
