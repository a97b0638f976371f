import Foundation
import Testing
@testable import WebImage
@testable import WebImageJXL

@Suite struct JXLCoderTests {
    @Test func everyCorpusJPEGXLMatchesItsReferenceAndEveryBadOneIsRefused() async throws {
        let result = try await CorpusConformance.mismatches(format: "JXL", coder: JXLCoder())
        #expect(result.valid >= 20 && result.invalid >= 2)
        #expect(result.problems.isEmpty, "\(result.problems.joined(separator: "\n"))")
    }

    @Test func everyFrameOfTheAnimationsMatchesWithItsDurationAndLoopCount() async throws {
        let result = try await CorpusConformance.frameMismatches(prefix: "jxl/", coder: JXLCoder())
        #expect(result.files >= 1)
        #expect(result.problems.isEmpty, "\(result.problems.joined(separator: "\n"))")
    }

    private static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Corpus.root.appendingPathComponent("jxl/valid/\(name)"))
    }

    @Test func animationsAreBoundedBeforeTheirPixelsAreDecoded() throws {
        let data = try Self.fixture("jxl-rs/5_frames_numbered_jxli.jxl")
        #expect(try JXLCoder().decode(data).frames.count == 5)
        #expect(throws: ImageCodingError.self) { try JXLCoder().decode(data, options: DecodeOptions(maxFrameCount: 4)) }
        #expect(!(try JXLCoder().decode(data, options: DecodeOptions(firstFrameOnly: true, maxFrameCount: 1)).isAnimated))
        var firstTwo = DecodeOptions(maxFrameCount: 4)
        firstTwo.maxDecodedFrames = 2
        #expect(try JXLCoder().decode(data, options: firstTwo).frames.count == 2, "the first N frames, the rest never decoded")
    }

    @Test func badBytesAndHugeDeclaredSizesAreTypedErrors() throws {
        let data = try Self.fixture("conformance/grayscale.jxl")
        for cut in [1, 2, 12, data.count / 2, data.count - 1] {
            #expect(throws: ImageCodingError.self, "cut at \(cut)") { try JXLCoder().decode(data.prefix(cut)) }
        }
        #expect(throws: ImageCodingError.imageTooLarge(width: 200, height: 200, limit: 1000)) {
            try JXLCoder().decode(data, options: DecodeOptions(pixelCountLimit: 1000))
        }
        // A codestream header declaring 2^30 x 2^30 pixels (the largest size field), then nothing.
        let huge = Data([0xFF, 0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x07])
        #expect(throws: ImageCodingError.self) { try JXLCoder().decode(huge) }
        #expect(throws: ImageCodingError.unsupportedFormat(.png)) { try JXLCoder().decode(try encodedPicture()) }
    }

    @Test func losslessRoundTripsExactlyAndLossyStaysClose() async throws {
        for format in PixelFormat.eightBitFormats {
            let width = 40, height = 30
            let pixels = (0..<(width * height * format.bytesPerPixel)).map { UInt8(truncatingIfNeeded: ($0 / format.bytesPerPixel) % width * 6 + $0 % 3 * 40) }
            let image = try Image(width: width, height: height, pixelFormat: format, pixels: pixels)
            let lossless = try JXLCoder().encode(image, as: .jxl, options: EncodeOptions(isLossless: true))
            #expect(ImageFormat(sniffing: lossless) == .jxl)
            let back = try JXLCoder().decode(lossless)
            // Grey is written as colour (the shim writes RGB and RGBA), so it comes back as RGB with equal channels.
            #expect(back.rgbaSHA256() == image.rgbaSHA256() && back.pixelFormat.hasAlpha == format.hasAlpha, "\(format)")
        }
        // Encoding a photo is CPU work: off the cooperative pool, the results checked here.
        let (photo, small, large, decoded) = try await offThePool {
            let photo = try EncodeOptionsTests.photo()
            let small = try JXLCoder().encode(photo, as: .jxl, options: EncodeOptions(compressionQuality: 0.5))
            let large = try JXLCoder().encode(photo, as: .jxl, options: EncodeOptions(compressionQuality: 0.95))
            return (photo, small, large, try JXLCoder().decode(large))
        }
        #expect(small.count < large.count, "quality steers the size: \(small.count) < \(large.count)")
        #expect(decoded.size == photo.size)
    }

    @Test func anAnimationKeepsItsFramesDurationsAndLoopCount() throws {
        let frames = try (0..<3).map { index in
            ImageFrame(image: try Image(width: 8, height: 8, pixelFormat: .rgba8, pixels: [UInt8](repeating: UInt8(index * 80), count: 256)),
                       duration: .milliseconds([100, 250, 40][index]))
        }
        let animation = try Image(frames: frames, loopCount: 3)
        let data = try JXLCoder().encode(animation, as: .jxl, options: EncodeOptions(isLossless: true))
        let back = try JXLCoder().decode(data)
        #expect(back.frames.count == 3 && back.loopCount == 3)
        #expect(back.frames.map(\.storedMilliseconds) == [100, 250, 40])
        #expect(back.frames.map { $0.image.rgbaSHA256() } == frames.map { $0.image.rgbaSHA256() })
        let still = try JXLCoder().decode(try JXLCoder().encode(animation, as: .jxl, options: EncodeOptions(firstFrameOnly: true)))
        #expect(!still.isAnimated)
    }
}
