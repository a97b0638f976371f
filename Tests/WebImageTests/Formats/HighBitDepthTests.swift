import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageJXL
import WebImageTIFF

/// 16-bit pixels in the library: kept by decoders only when asked (``DecodeOptions/keepsHighBitDepth``),
/// written by PNG, TIFF and JPEG XL, resized at 16 bits, narrowed for every coder and transformer that
/// works on 8-bit samples.
@Suite struct HighBitDepthTests {
    static let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), TIFFCoder(), JXLCoder(), AVIFCoder()])

    static func samples(_ image: Image) -> [UInt16] {
        image.pixels.withUnsafeBytes { Array($0.bindMemory(to: UInt16.self)) }
    }

    static func picture(_ format: PixelFormat, width: Int = 9, height: Int = 5) throws -> Image {
        let count = width * height * format.channelCount
        let values = (0..<count).map { UInt16(truncatingIfNeeded: $0 * 4099 + 17) }
        return try Image(width: width, height: height, pixelFormat: format, pixels: values.withUnsafeBytes { [UInt8]($0) })
    }

    @Test(arguments: [PixelFormat.gray16, .grayAlpha16, .rgb16, .rgba16])
    func pngAndTIFFKeepEverySixteenBitSample(format: PixelFormat) throws {
        let image = try Self.picture(format)
        var keep = DecodeOptions()
        keep.keepsHighBitDepth = true
        for output in [ImageFormat.png, .tiff] {
            let data = try Self.coders.encode(image, as: output)
            let back = try Self.coders.decode(data, options: keep)
            #expect(back.pixelFormat == format && Self.samples(back) == Self.samples(image), "\(output) \(format)")
            let narrow = try Self.coders.decode(data)
            #expect(narrow.pixelFormat == format.eightBit, "without keepsHighBitDepth: 8 bits (\(output) \(format))")
            #expect(narrow.pixels.first == UInt8(Self.samples(image)[0] >> 8), "the high byte, as the corpus reference reads it")
        }
        let jxl = try Self.coders.encode(image, as: .jxl, options: EncodeOptions(isLossless: true))
        let back = try Self.coders.decode(jxl, options: keep)
        let colour = try image.converted(to: .layout(color: true, alpha: format.hasAlpha, highBitDepth: true))   // the shim writes colour
        #expect(back.pixelFormat == colour.pixelFormat && Self.samples(back) == Self.samples(colour), "lossless JPEG XL \(format)")
        let avif = try Self.coders.decode(try Self.coders.encode(image, as: .avif, options: EncodeOptions(isLossless: true)), options: keep)
        let error = zip(Self.samples(avif), Self.samples(colour)).map { abs(Int($0) - Int($1)) }.max() ?? .max
        #expect(avif.pixelFormat == colour.pixelFormat && error <= 16, "lossless 12-bit AVIF \(format): off by \(error) of 65535")
        #expect(ImageFormat(sniffing: try Self.coders.encode(image, as: .jpeg)) == .jpeg, "JPEG is handed 8 bits")
        #expect(ImageFormat(sniffing: try Self.coders.encode(image, as: .gif)) == .gif, "GIF is handed 8 bits")
    }

    /// The incremental decoder keeps 16 bits as the full decode does (its final image is the full decode's).
    @Test func anIncrementalPNGDecodeKeepsSixteenBitsToo() throws {
        let image = try Self.picture(.rgba16, width: 30, height: 20)
        let data = try PNGCoder().encode(image, as: .png)
        var keep = DecodeOptions()
        keep.keepsHighBitDepth = true
        let decoder = PNGCoder().makeIncrementalDecoder(options: keep)
        for start in stride(from: 0, to: data.count, by: 97) {
            try decoder.append(data.subdata(in: start..<min(start + 97, data.count)))
            if let partial = decoder.makePartialImage() { #expect(partial.pixelFormat == .rgba16) }
        }
        let final = try decoder.finish()
        #expect(final.pixelFormat == .rgba16 && Self.samples(final) == Self.samples(image))
    }

    @Test func depthConversionsWidenByTwoFiftySevenAndNarrowToTheNearest() throws {
        let eight = try Image(width: 3, height: 1, pixelFormat: .gray8, pixels: [UInt8]([0, 128, 255]))
        let wide = try eight.converted(to: .rgba16)
        #expect(Self.samples(wide) == [0, 0, 0, 65535, 32896, 32896, 32896, 65535, 65535, 65535, 65535, 65535])
        let deep = try Image(width: 3, height: 1, pixelFormat: .gray16, pixels: [UInt16(0), 32_767, 65_535].withUnsafeBytes { [UInt8]($0) })
        let narrowed = try deep.reducedToEightBits()
        #expect(narrowed.pixels == Data([0, 127, 255]) && narrowed.pixelFormat == .gray8)
        let rgb = try Image(width: 1, height: 1, pixelFormat: .rgb16, pixels: [UInt16(65535), 0, 0].withUnsafeBytes { [UInt8]($0) })
        #expect(Self.samples(try rgb.converted(to: .gray16)) == [19595], "BT.601 luma at 16 bits")
    }

    @Test func resizingFiltersSixteenBitSamplesAtSixteenBits() throws {
        // Two columns 1 apart in 16 bits: an 8-bit resample could not give the value between them.
        let values: [UInt16] = [1000, 1001, 1000, 1001]
        let image = try Image(width: 2, height: 2, pixelFormat: .gray16, pixels: values.withUnsafeBytes { [UInt8]($0) })
        let small = try Resampler.resample(image, to: PixelSize(width: 1, height: 1))
        #expect(small.pixelFormat == .gray16 && Self.samples(small) == [1001], "(1000 + 1001) / 2 rounded")
        let alpha = try Self.picture(.rgba16, width: 40, height: 30)
        let resized = try ResizingTransformer(size: PixelSize(width: 20, height: 15)).transformKeepingMetadata(alpha, forKey: "")
        #expect(resized.pixelFormat == .rgba16 && resized.size == PixelSize(width: 20, height: 15))
    }

    @Test func aTransformerForEightBitsIsHandedEightBits() throws {
        let image = try Self.picture(.rgb16)
        let blurred = try BlurTransformer(radius: 1).transformKeepingMetadata(image, forKey: "")
        #expect(blurred.pixelFormat == .rgb8)
        let cropped = try CroppingTransformer(rect: PixelRect(x: 1, y: 1, width: 3, height: 2)).transformKeepingMetadata(image, forKey: "")
        #expect(cropped.pixelFormat == .rgb16)
        let pipeline = PipelineTransformer([CroppingTransformer(rect: PixelRect(x: 0, y: 0, width: 4, height: 4)), BlurTransformer(radius: 1)])
        #expect(try pipeline.transformKeepingMetadata(image, forKey: "").pixelFormat == .rgb8, "each stage as it takes them")
    }
}

extension PixelFormat {
    /// The 8-bit layouts, for tests written for 8-bit samples (16-bit ones are `HighBitDepthTests`').
    static let eightBitFormats: [PixelFormat] = allCases.filter { !$0.isHighBitDepth }
}
