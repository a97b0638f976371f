import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's colour-space cases (`processing/colorspace_test.go`: `TestColorspace`, `TestDownscaleHDR`,
/// `TestWatermarkColorspace`, `TestPreserveHDROptionOverride`) through `webimage serve`: with `preserve_hdr`
/// (or `IMGPROXY_PRESERVE_HDR`) a 16-bit PNG or TIFF source stays 16-bit in a PNG, TIFF or JPEG XL answer,
/// grey as grey (`grey16`) and colour as colour (`rgb16`); without it, and in JPEG, answers are 8-bit.
@Suite struct HighBitDepthServingTests {
    /// A 16-bit picture whose samples differ in their low bytes (an 8-bit round trip cannot keep them).
    static func deepPicture(width: Int = 60, height: Int = 40, color: Bool) throws -> Image {
        let format: PixelFormat = color ? .rgb16 : .gray16
        var samples: [UInt16] = []
        for y in 0..<height {
            for x in 0..<width {
                let base = UInt16(x * 1000 + y * 7 + 3)
                samples += color ? [base, base &+ 101, UInt16(65535 - Int(base))] : [base]
            }
        }
        let bytes = samples.withUnsafeBytes { [UInt8]($0) }
        return try Image(width: width, height: height, pixelFormat: format, pixels: bytes)
    }

    /// A PNG's bit depth and colour type (IHDR bytes 24 and 25).
    static func pngHeader(_ data: Data) -> (depth: Int, colorType: Int)? {
        guard data.count > 26, ImageFormat(sniffing: data) == .png else { return nil }
        return (Int(data[data.startIndex + 24]), Int(data[data.startIndex + 25]))
    }

    static let rgb16 = (depth: 16, colorType: 2), grey16 = (depth: 16, colorType: 0), srgb = (depth: 8, colorType: 2), bw = (depth: 8, colorType: 0)

    func fixture(preservesHDR: Bool, watermark: Image? = nil) async throws -> ServerFixture {
        let fixture = try await ServerFixture {
            $0.processingDefaults.preservesHDR = preservesHDR
            if let watermark { $0.watermark = try? WatermarkImage(image: watermark) }
        }
        let coders = ServerFixture.coders
        let flat = try Image(width: 60, height: 40, pixelFormat: .rgb8, pixels: (0..<7200).map { UInt8(truncatingIfNeeded: $0) })
        let sources: [(String, Data)] = [
            ("/8.png", try coders.encode(flat, as: .png)),
            ("/8-grey.png", try coders.encode(try flat.converted(to: .gray8), as: .png)),
            ("/16.png", try coders.encode(try Self.deepPicture(color: true), as: .png)),
            ("/16-grey.png", try coders.encode(try Self.deepPicture(color: false), as: .png)),
            ("/16.tiff", try coders.encode(try Self.deepPicture(color: true), as: .tiff)),
            ("/16-grey.tiff", try coders.encode(try Self.deepPicture(color: false), as: .tiff)),
        ]
        for (route, body) in sources {
            fixture.sources.route(route, TestResponse(headers: [("Content-Type", ImageFormat(sniffing: body).mimeType)], body: body))
        }
        return fixture
    }

    func header(_ fixture: ServerFixture, _ options: String, _ route: String) async throws -> (depth: Int, colorType: Int)? {
        let reply = try await fixture.get("/insecure/rs:fill:100:100/el:1/\(options)/plain/\(fixture.source(route))")
        #expect(reply.status == 200, "\(options) \(route): \(reply.status) \(String(decoding: reply.body, as: UTF8.self))")
        #expect(try ServerFixture.coders.decode(reply.body).size == PixelSize(width: 100, height: 100), "\(options) \(route)")
        return Self.pngHeader(reply.body)
    }

    @Test func sixteenBitSourcesStaySixteenBitWithPreserveHDR() async throws {
        let fixture = try await fixture(preservesHDR: true)
        let cases: [(String, String, (depth: Int, colorType: Int))] = [
            ("8.png", "f:png", Self.srgb), ("16.png", "f:png", Self.rgb16), ("16.tiff", "f:png", Self.rgb16),
            ("8-grey.png", "f:png", Self.bw), ("16-grey.png", "f:png", Self.grey16), ("16-grey.tiff", "f:png", Self.grey16),
            ("16.png", "f:png/ph:0", Self.srgb), ("16-grey.png", "f:png/ph:false", Self.bw),
        ]
        for (source, options, expected) in cases {
            let found = try await header(fixture, options, "/" + source)
            #expect(found?.depth == expected.depth && found?.colorType == expected.colorType, "\(source) \(options): \(String(describing: found))")
        }
        for source in ["16.png", "16-grey.png"] {   // JPEG holds 8 bits: the answer is simply a JPEG
            let reply = try await fixture.get("/insecure/rs:fill:100:100/el:1/f:jpeg/plain/\(fixture.source("/" + source))")
            #expect(reply.status == 200 && reply.header("Content-Type") == "image/jpeg", "\(source)")
        }
        await fixture.stop()
    }

    @Test func withoutPreserveHDRAnswersAreEightBitUnlessTheURLAsks() async throws {
        let fixture = try await fixture(preservesHDR: false)
        for (source, options, expected) in [("16.png", "f:png", Self.srgb), ("16.tiff", "f:png", Self.srgb), ("16-grey.png", "f:png", Self.bw),
                                            ("16-grey.tiff", "f:png", Self.bw), ("16.png", "f:png/ph:1", Self.rgb16),
                                            ("16-grey.png", "ph:true", Self.grey16)] {
            let found = try await header(fixture, options, "/" + source)
            #expect(found?.depth == expected.depth && found?.colorType == expected.colorType, "\(source) \(options): \(String(describing: found))")
        }
        await fixture.stop()
    }

    /// The 16 bits are the source's own (not 8-bit values widened): an answer the size of its source keeps every sample.
    @Test func theSamplesThemselvesSurviveInPNGTIFFAndJPEGXL() async throws {
        let fixture = try await fixture(preservesHDR: true)
        let source = try Self.deepPicture(color: true)
        var keep = DecodeOptions()
        keep.keepsHighBitDepth = true
        for format in ["png", "tiff", "jxl", "avif"] {
            let path = "/insecure/rs:fill:60:40/q:100/plain/\(fixture.source("/16.png"))@\(format)"
            let reply = try await fixture.get(path)
            #expect(reply.status == 200, "\(path): \(reply.status)")
            let image = try ServerFixture.coders.decode(reply.body, options: keep)
            #expect(image.pixelFormat == .rgb16, "\(format): \(image.pixelFormat)")
            if format == "png" || format == "tiff" {   // lossless formats: every sample exactly
                #expect(image.pixels == source.pixels, "\(format): the 16-bit samples changed")
            }
        }
        await fixture.stop()
    }

    /// `TestWatermarkColorspace`: the result's depth is the source's; colour when either picture is colour.
    @Test func aWatermarkKeepsTheSourcesDepth() async throws {
        let colorMark = try Image(width: 20, height: 10, pixelFormat: .rgba8, pixels: [UInt8](repeating: 200, count: 800))
        let colored = try await fixture(preservesHDR: true, watermark: colorMark)
        for (source, expected) in [("16-grey.png", Self.rgb16), ("8.png", Self.srgb), ("16.png", Self.rgb16)] {
            let found = try await header(colored, "f:png/wm:0.5", "/" + source)
            #expect(found?.depth == expected.depth && found?.colorType == expected.colorType, "\(source): \(String(describing: found))")
        }
        await colored.stop()
        let greyMark = try await fixture(preservesHDR: true, watermark: try Self.deepPicture(width: 20, height: 10, color: false))
        for (source, expected) in [("16-grey.png", Self.grey16), ("8-grey.png", Self.bw), ("8.png", Self.srgb)] {
            let found = try await header(greyMark, "f:png/wm:0.5", "/" + source)
            #expect(found?.depth == expected.depth && found?.colorType == expected.colorType, "\(source): \(String(describing: found))")
        }
        await greyMark.stop()
    }
}
