import Foundation
import Testing
@testable import WebImage

@Suite struct JPEGEncoderTests {
    let coder = JPEGCoder()

    static func decodeCorpus(_ path: String) throws -> Image {
        try JPEGCoder().decode(Data(contentsOf: Corpus.root.appendingPathComponent(path)), options: DecodeOptions())
    }

    @Test func encodingAtQuality09ThenDecodingHasAPSNROfAtLeast38dB() throws {
        for path in ["jpeg/valid/wuffs/hibiscus.primitive.jpeg", "jpeg/valid/pillow/flower.jpg", "jpeg/valid/wuffs/peacock.q99.jpeg"] {
            let original = try Self.decodeCorpus(path)
            let encoded = try coder.encode(original, as: .jpeg, options: EncodeOptions(compressionQuality: 0.9))
            #expect(ImageFormat(sniffing: encoded) == .jpeg)
            let decoded = try coder.decode(encoded, options: DecodeOptions())
            #expect(decoded.size == original.size)
            let psnr = JPEGTestSupport.psnr(original, decoded)
            #expect(psnr >= 38, "\(path): \(psnr) dB")
        }
    }

    @Test func lowerQualityMakesSmallerFiles() throws {
        let image = try Self.decodeCorpus("jpeg/valid/wuffs/hibiscus.primitive.jpeg")
        let sizes = try [0.0, 0.3, 0.6, 0.9, 1.0].map { try coder.encode(image, as: .jpeg, options: EncodeOptions(compressionQuality: $0)).count }
        #expect(sizes == sizes.sorted() && Set(sizes).count == sizes.count, "\(sizes)")
    }

    @Test func grayStaysGray() throws {
        let gray = try Self.decodeCorpus("jpeg/valid/wuffs/bricks-gray.jpeg")
        let decoded = try coder.decode(try coder.encode(gray, as: .jpeg, options: EncodeOptions()), options: DecodeOptions())
        #expect(decoded.pixelFormat == .gray8)
        #expect(JPEGTestSupport.psnr(gray, decoded) >= 38)
    }

    @Test func alphaIsComposedOverTheBackgroundColour() throws {
        // Left half opaque red, right half fully transparent; 50 % alpha blue in the middle row.
        var rgba: [UInt8] = []
        for y in 0..<16 {
            for x in 0..<16 {
                if y == 8 { rgba += [0, 0, 255, 128] } else { rgba += x < 8 ? [255, 0, 0, 255] : [0, 0, 0, 0] }
            }
        }
        let image = try Image(width: 16, height: 16, pixelFormat: .rgba8, pixels: rgba)
        let options = EncodeOptions(compressionQuality: 1, backgroundColor: PixelColor(red: 0, green: 255, blue: 0))
        let decoded = try coder.decode(try coder.encode(image, as: .jpeg, options: options), options: DecodeOptions())
        #expect(decoded.pixelFormat == .rgb8)
        func pixel(_ x: Int, _ y: Int) -> [Int] { decoded.withUnsafeRow(y) { row in (0..<3).map { Int(row[3 * x + $0]) } } }
        func near(_ a: [Int], _ b: [Int]) -> Bool { zip(a, b).allSatisfy { abs($0 - $1) <= 12 } }
        #expect(near(pixel(2, 2), [255, 0, 0]), "\(pixel(2, 2))")
        #expect(near(pixel(13, 2), [0, 255, 0]), "\(pixel(13, 2))")
        #expect(near(pixel(4, 8), [0, 127, 128]), "\(pixel(4, 8))")

        let grayAlpha = try Image(width: 2, height: 1, pixelFormat: .grayAlpha8, pixels: [200, 255, 0, 0])
        let overWhite = try coder.decode(try coder.encode(grayAlpha, as: .jpeg, options: EncodeOptions()), options: DecodeOptions())
        #expect(overWhite.pixelFormat == .gray8)
        let overGreen = try coder.decode(try coder.encode(grayAlpha, as: .jpeg, options: options), options: DecodeOptions())
        #expect(overGreen.pixelFormat == .rgb8)
    }

    @Test func maxPixelSizeScalesDownKeepingTheAspectRatio() throws {
        let image = try Self.decodeCorpus("jpeg/valid/wuffs/harvesters.jpeg") // 1165x859
        let encoded = try coder.encode(image, as: .jpeg, options: EncodeOptions(maxPixelSize: 200))
        #expect(try coder.decode(encoded, options: DecodeOptions()).size == PixelSize(width: 200, height: 147))
        let untouched = try coder.encode(image, as: .jpeg, options: EncodeOptions(maxPixelSize: 5000))
        #expect(try coder.decode(untouched, options: DecodeOptions()).size == image.size)
        // The one fitting rule every encoder scales by (EncodeOptions.frames(of:)).
        #expect(PNGCoder.size(of: PixelSize(width: 1000, height: 1), fittingSide: 10) == PixelSize(width: 10, height: 1))
    }

    @Test func onlyJPEGCanBeEncoded() throws {
        let image = try Image(width: 1, height: 1, pixelFormat: .rgb8, pixels: [1, 2, 3])
        #expect(throws: ImageCodingError.unsupportedEncoding(format: .png, pixelFormat: .rgb8)) {
            try coder.encode(image, as: .png, options: EncodeOptions())
        }
    }

    @Test func strideIsHonouredAndOnePixelImagesWork() throws {
        let padded = try Image(width: 2, height: 2, pixelFormat: .rgb8,
                               pixels: [10, 20, 30, 40, 50, 60, 9, 9, 70, 80, 90, 100, 110, 120, 9, 9], bytesPerRow: 8)
        let decoded = try coder.decode(try coder.encode(padded, as: .jpeg, options: EncodeOptions(compressionQuality: 1)),
                                       options: DecodeOptions())
        #expect(decoded.size == PixelSize(width: 2, height: 2))
        let one = try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [77])
        let back = try coder.decode(try coder.encode(one, as: .jpeg, options: EncodeOptions(compressionQuality: 1)), options: DecodeOptions())
        #expect(back.withUnsafeRow(0) { abs(Int($0[0]) - 77) <= 1 })
    }

    @Test func progressiveOutputHasAProgressiveFrameAndDecodesToTheSamePixels() throws {
        let image = try Image(width: 64, height: 48, pixelFormat: .rgb8,
                              pixels: (0..<(64 * 48 * 3)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let baseline = try coder.encode(image, as: .jpeg, options: EncodeOptions())
        let progressive = try coder.encode(image, as: .jpeg, options: EncodeOptions(isProgressive: true))
        #expect(progressive.range(of: Data([0xFF, 0xC2])) != nil, "SOF2: a progressive frame")
        #expect(baseline.range(of: Data([0xFF, 0xC2])) == nil && baseline.range(of: Data([0xFF, 0xC0])) != nil)
        let a = try coder.decode(baseline, options: DecodeOptions()), b = try coder.decode(progressive, options: DecodeOptions())
        #expect(a.pixels == b.pixels, "the same quantized coefficients, only sent in another order")
    }
}
