import Foundation
import Testing
@testable import WebImage

/// An image's average colour (alpha-weighted) and dominant colour (the fullest of 4096 buckets).
@Suite struct ImageColorsTests {
    func image(_ width: Int, _ height: Int, _ pixel: (Int, Int) -> [UInt8]) throws -> Image {
        var bytes: [UInt8] = []
        for y in 0..<height { for x in 0..<width { bytes += pixel(x, y) } }
        return try Image(width: width, height: height, pixelFormat: .rgba8, pixels: bytes)
    }

    @Test func theAverageWeighsColoursByTheirAlpha() throws {
        // Half opaque red, half transparent green: the green counts for nothing, the alpha is half.
        let half = try image(10, 10) { x, _ in x < 5 ? [255, 0, 0, 255] : [0, 255, 0, 0] }
        #expect(try half.averageColor() == PixelColor(red: 255, green: 0, blue: 0, alpha: 128))
        let mixed = try image(2, 1) { x, _ in x == 0 ? [200, 100, 0, 255] : [0, 100, 200, 255] }
        #expect(try mixed.averageColor() == PixelColor(red: 100, green: 100, blue: 100, alpha: 255))
    }

    @Test func theDominantColourIsTheMostCommonOne() throws {
        // Three quarters blue, a quarter white: blue dominates though the average is light blue.
        let picture = try image(20, 20) { x, y in x < 10 && y < 10 ? [255, 255, 255, 255] : [20, 40, 200, 255] }
        #expect(try picture.dominantColor() == PixelColor(red: 20, green: 40, blue: 200))
        #expect(try picture.averageColor() != PixelColor(red: 20, green: 40, blue: 200))
    }

    @Test func mostlyTransparentPixelsDoNotDominate() throws {
        let picture = try image(10, 10) { x, _ in x < 8 ? [0, 0, 0, 10] : [250, 10, 10, 255] }
        #expect(try picture.dominantColor() == PixelColor(red: 250, green: 10, blue: 10))
    }

    @Test func aFullyTransparentImageHasNoColour() throws {
        let clear = try image(4, 4) { _, _ in [30, 60, 90, 0] }
        #expect(try clear.averageColor() == .clear && clear.dominantColor() == .clear)
    }

    @Test func grayImagesAndLargeImagesWork() throws {
        let gray = try Image(width: 300, height: 200, pixelFormat: .gray8, pixels: [UInt8](repeating: 77, count: 300 * 200))
        #expect(try gray.averageColor() == PixelColor(red: 77, green: 77, blue: 77) && gray.dominantColor() == PixelColor(red: 77, green: 77, blue: 77))
    }
}
