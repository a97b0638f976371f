import Testing
@testable import WebImage

@Suite struct FlippingTransformerTests {
    typealias Support = TransformerTestSupport

    @Test(arguments: PixelFormat.eightBitFormats)
    func horizontalFlipMirrorsLeftAndRight(format: PixelFormat) throws {
        let image = try Support.distinct(7, 5, format)
        let flipped = try FlippingTransformer(horizontal: true).transform(image, forKey: "k")
        #expect(flipped.size == image.size)
        #expect(flipped.pixelFormat == format)
        for y in 0..<5 {
            for x in 0..<7 {
                #expect(Support.pixel(flipped, x, y) == Support.pixel(image, 6 - x, y), "pixel (\(x), \(y))")
            }
        }
    }

    @Test func horizontalFlipDoesNotTurnRowsUpsideDown() throws {
        let image = try Support.distinct(6, 4, .rgb8)
        let flipped = try FlippingTransformer(horizontal: true).transform(image, forKey: "k")
        // Pixel (0, y) moves to (5, y): same row, so channel 1 (the source y) is kept.
        #expect(Support.pixel(flipped, 5, 0) == Support.pixel(image, 0, 0))
        #expect(Support.pixel(flipped, 5, 3) == Support.pixel(image, 0, 3))
        #expect(Support.pixel(flipped, 0, 0)[0..<2] == [5, 0])
        #expect(Support.pixel(flipped, 0, 3)[0..<2] == [5, 3])
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func verticalFlipMirrorsTopAndBottom(format: PixelFormat) throws {
        let image = try Support.distinct(7, 5, format)
        let flipped = try FlippingTransformer(vertical: true).transform(image, forKey: "k")
        #expect(flipped.size == image.size)
        #expect(flipped.pixelFormat == format)
        for y in 0..<5 {
            for x in 0..<7 {
                #expect(Support.pixel(flipped, x, y) == Support.pixel(image, x, 4 - y), "pixel (\(x), \(y))")
            }
        }
    }

    @Test func verticalFlipMovesTheTopRowToTheBottom() throws {
        let image = try Support.distinct(6, 4, .rgb8)
        let flipped = try FlippingTransformer(vertical: true).transform(image, forKey: "k")
        let rowBytes = 18
        #expect(Array(flipped.pixels[(3 * rowBytes)..<(4 * rowBytes)]) == Array(image.pixels[0..<rowBytes]))
        #expect(Support.pixel(flipped, 0, 0)[0..<2] == [0, 3])
        #expect(Support.pixel(flipped, 5, 0)[0..<2] == [5, 3])
    }

    @Test func bothDirectionsTurnTheImageHalfway() throws {
        let image = try Support.distinct(7, 5, .rgba8)
        let flipped = try FlippingTransformer(horizontal: true, vertical: true).transform(image, forKey: "k")
        for y in 0..<5 {
            for x in 0..<7 {
                #expect(Support.pixel(flipped, x, y) == Support.pixel(image, 6 - x, 4 - y), "pixel (\(x), \(y))")
            }
        }
        let rotated = try RotationTransformer(angle: 180).transform(image, forKey: "k")
        #expect(Array(flipped.pixels) == Array(rotated.pixels))
    }

    @Test(arguments: [(true, false), (false, true), (true, true)])
    func flippingTwiceGivesTheOriginal(horizontal: Bool, vertical: Bool) throws {
        let image = try Support.distinct(9, 4, .grayAlpha8)
        let transformer = FlippingTransformer(horizontal: horizontal, vertical: vertical)
        let once = try transformer.transform(image, forKey: "k")
        #expect(Array(once.pixels) != Array(image.pixels))
        let twice = try transformer.transform(once, forKey: "k")
        #expect(Array(twice.pixels) == Array(image.pixels))
    }

    @Test func noDirectionKeepsThePixels() throws {
        let image = try Support.distinct(5, 3, .rgb8)
        let same = try FlippingTransformer().transform(image, forKey: "k")
        #expect(Array(same.pixels) == Array(image.pixels))
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Support.distinct(8, 6, .rgb8)
        let before = Array(image.pixels)
        let flipped = try FlippingTransformer(horizontal: true, vertical: true).transform(image, forKey: "k")
        #expect(Array(flipped.pixels) != before)
        #expect(Array(image.pixels) == before)
    }

    @Test func keys() {
        #expect(FlippingTransformer(horizontal: true).key == "FlippingTransformer(1,0)")
        #expect(FlippingTransformer(vertical: true).key == "FlippingTransformer(0,1)")
        #expect(FlippingTransformer(horizontal: true, vertical: true).key == "FlippingTransformer(1,1)")
        #expect(FlippingTransformer().key == "FlippingTransformer(0,0)")
    }

    @Test func orientedImagesAreFlippedAsDisplayed() throws {
        // Stored 4x3 turned 90° clockwise on display (orientation .right): upright (x, y) is stored (y, 2 - x).
        let stored = try Support.distinct(4, 3, .rgb8)
        let image = try Image(width: 4, height: 3, pixelFormat: .rgb8, pixels: stored.pixels, orientation: .right)
        let flipped = try FlippingTransformer(horizontal: true).transform(image, forKey: "k")
        #expect(flipped.size == PixelSize(width: 3, height: 4))
        #expect(flipped.orientation == .up)
        for y in 0..<4 {
            for x in 0..<3 {
                // Mirrored upright pixel (x, y) is upright (2 - x, y), which is stored (y, x).
                #expect(Support.pixel(flipped, x, y) == Support.pixel(stored, y, x), "pixel (\(x), \(y))")
            }
        }
    }
}
