import Testing
@testable import WebImage

@Suite struct ImageConversionTests {
    @Test func grayExpandsToOpaqueRGBA() throws {
        let image = try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 200])
        #expect(Array(try image.converted(to: .rgba8).pixels) == [0, 0, 0, 255, 200, 200, 200, 255])
    }

    @Test func grayAlphaKeepsItsAlpha() throws {
        let image = try Image(width: 1, height: 1, pixelFormat: .grayAlpha8, pixels: [90, 17])
        #expect(Array(try image.converted(to: .rgba8).pixels) == [90, 90, 90, 17])
        #expect(Array(try image.converted(to: .rgb8).pixels) == [90, 90, 90])
    }

    @Test func colourBecomesGrayByLuma() throws {
        let image = try Image(width: 3, height: 1, pixelFormat: .rgb8, pixels: [255, 0, 0, 0, 255, 0, 0, 0, 255])
        #expect(Array(try image.converted(to: .gray8).pixels) == [76, 150, 29])
    }

    @Test func roundTripThroughRGBAIsLosslessForEveryFormat() throws {
        let samples: [PixelFormat: [UInt8]] = [
            .gray8: [0, 1, 128, 255], .grayAlpha8: [0, 9, 128, 0, 255, 255, 3, 77],
            .rgb8: Array(0..<12), .rgba8: Array(100..<116),
        ]
        for (format, bytes) in samples {
            let image = try Image(width: 4, height: 1, pixelFormat: format, pixels: bytes)
            let back = try image.converted(to: .rgba8).converted(to: format)
            #expect(Array(back.pixels) == Array(image.pixels), "\(format)")
        }
    }

    @Test func convertingToTheSameFormatReturnsTheSameImage() throws {
        let image = try Image(width: 1, height: 1, pixelFormat: .rgb8, pixels: [1, 2, 3])
        #expect(try image.converted(to: .rgb8) === image)
    }
}
