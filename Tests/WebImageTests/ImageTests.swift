import Foundation
import Testing
@testable import WebImage

@Suite struct ImageTests {
    @Test func keepsGeometryAndPixelsOfTheBytesItWasGiven() throws {
        let bytes: [UInt8] = Array(0..<24)
        let image = try Image(width: 3, height: 2, pixelFormat: .rgba8, pixels: bytes, format: .png, scale: 2)
        #expect(image.width == 3 && image.height == 2)
        #expect(image.bytesPerRow == 12)
        #expect(image.cost == 24)
        #expect(image.format == .png && image.scale == 2 && image.orientation == .up)
        #expect(Array(image.pixels) == bytes)
        #expect(image.withUnsafeRow(1) { Array($0) } == Array(12..<24))
    }

    @Test func dropsRowPaddingOfTheSource() throws {
        // Two rows of two gray pixels, each row padded to four bytes.
        let image = try Image(width: 2, height: 2, pixelFormat: .gray8, pixels: [1, 2, 99, 99, 3, 4, 99, 99], bytesPerRow: 4)
        #expect(Array(image.pixels) == [1, 2, 3, 4])
    }

    @Test func refusesImpossibleGeometry() {
        #expect(throws: ImageCodingError.self) { try Image(width: 0, height: 1, pixelFormat: .gray8, pixels: [0]) }
        #expect(throws: ImageCodingError.self) { try Image(width: 2, height: 2, pixelFormat: .rgb8, pixels: [UInt8](repeating: 0, count: 11)) }
        #expect(throws: ImageCodingError.self) { try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 0], bytesPerRow: 1) }
        #expect(throws: ImageCodingError.self) { try Image(width: .max, height: 2, pixelFormat: .rgba8, pixels: [0]) }
    }

    @Test func pixelsDataOutlivesTheImage() throws {
        var data: Data?
        do {
            let image = try Image(width: 2, height: 1, pixelFormat: .grayAlpha8, pixels: [10, 20, 30, 40])
            data = image.pixels
        }
        #expect(data.map(Array.init) == [10, 20, 30, 40])
    }

    @Test func writingToTheReturnedPixelsNeverChangesTheImage() throws {
        let image = try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [7, 8])
        var copy = image.pixels
        copy[copy.startIndex] = 200
        #expect(Array(image.pixels) == [7, 8])
        #expect(image.withUnsafeRow(0) { $0[0] } == 7)
    }

    @Test func costCountsTheMemoryAllocatedNotJustThePixels() throws {
        let image = try Image(width: 1024, height: 1100, pixelFormat: .rgba8, pixels: [UInt8](repeating: 0, count: 1024 * 1100 * 4))
        #expect(image.cost == image.storage.capacity)
        #expect(image.cost >= image.bytesPerRow * image.height)
    }

    @Test func stillImageHasOneFrameThatIsItself() throws {
        let image = try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [7])
        #expect(!image.isAnimated)
        #expect(image.frames.count == 1)
        #expect(image.frames[0].image === image)
        #expect(image.frames[0].duration == .zero)
    }

    @Test func pixelFormatsDescribeTheirLayout() {
        #expect(PixelFormat.allCases.map(\.bytesPerPixel) == [1, 2, 3, 4, 2, 4, 6, 8])
        #expect(PixelFormat.allCases.map(\.hasAlpha) == [false, true, false, true, false, true, false, true])
        #expect(PixelFormat.allCases.map(\.eightBit) == [.gray8, .grayAlpha8, .rgb8, .rgba8, .gray8, .grayAlpha8, .rgb8, .rgba8])
        #expect(PixelFormat.allCases.map(\.withAlpha) == [.grayAlpha8, .grayAlpha8, .rgba8, .rgba8, .grayAlpha16, .grayAlpha16, .rgba16, .rgba16])
        #expect(PixelFormat.gray8.withAlpha == .grayAlpha8 && PixelFormat.rgb8.withAlpha == .rgba8)
    }

    @Test func withOrientationSharesThePixelsAndOnlyChangesTheLabel() throws {
        let image = try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [1, 2], format: .webp, scale: 2)
        let labelled = image.withOrientation(.right)
        #expect(labelled.orientation == .right && labelled.format == .webp && labelled.scale == 2)
        #expect(labelled.pixels == image.pixels)
        #expect(image.withOrientation(.up) === image)
        #expect(try labelled.oriented().size == PixelSize(width: 1, height: 2))
    }
}
