import Testing
@testable import WebImage

@Suite struct RoundCornerTransformerTests {
    typealias Support = TransformerTestSupport

    @Test(arguments: [
        (PixelFormat.gray8, PixelFormat.grayAlpha8),
        (.grayAlpha8, .grayAlpha8),
        (.rgb8, .rgba8),
        (.rgba8, .rgba8),
    ])
    func theResultGainsAlpha(source: PixelFormat, expected: PixelFormat) throws {
        let image = try Support.distinct(20, 16, source)
        let rounded = try RoundCornerTransformer(radius: 5).transform(image, forKey: "k")
        #expect(rounded.pixelFormat == expected)
        #expect(rounded.size == image.size)
        #expect(rounded.bytesPerRow == 20 * expected.bytesPerPixel)
    }

    @Test func aColouredBorderOnGrayGivesRGBA() throws {
        let image = try Support.constant(20, 16, .gray8, [100])
        let red = PixelColor(red: 255, green: 0, blue: 0)
        #expect(try RoundCornerTransformer(radius: 4, borderWidth: 2, borderColor: red).transform(image, forKey: "k").pixelFormat == .rgba8)
        // A gray border, or a coloured one of no width, keeps gray.
        #expect(try RoundCornerTransformer(radius: 4, borderWidth: 2, borderColor: .white).transform(image, forKey: "k").pixelFormat == .grayAlpha8)
        #expect(try RoundCornerTransformer(radius: 4, borderWidth: 0, borderColor: red).transform(image, forKey: "k").pixelFormat == .grayAlpha8)
    }

    @Test(arguments: [PixelFormat.rgba8, .rgb8, .grayAlpha8, .gray8])
    func centrePixelsAreUntouched(format: PixelFormat) throws {
        let image = try Support.image(40, 30, format, value: Support.random(40, 30, format, seed: 7))
        let rounded = try RoundCornerTransformer(radius: 8).transform(image, forKey: "k")
        for y in 1..<29 {
            for x in 1..<39 {
                // Away from the corners (and from the one-pixel edge) the shape does not reach.
                let inCorner = (x < 8 || x >= 32) && (y < 8 || y >= 22)
                if inCorner { continue }
                let source = Support.pixel(image, x, y)
                let result = Support.pixel(rounded, x, y)
                if format.hasAlpha {
                    #expect(result == source, "pixel (\(x), \(y))")
                } else {
                    #expect(Array(result.dropLast()) == source && result.last == 255, "pixel (\(x), \(y))")
                }
            }
        }
    }

    @Test func colourChannelsAreKeptEvenWhereAlphaIsCut() throws {
        let image = try Support.image(24, 24, .rgb8, value: Support.random(24, 24, .rgb8, seed: 3))
        let rounded = try RoundCornerTransformer(radius: 10).transform(image, forKey: "k")
        for y in 0..<24 {
            for x in 0..<24 where Support.alpha(rounded, x, y) > 0 {
                #expect(Array(Support.pixel(rounded, x, y).prefix(3)) == Support.pixel(image, x, y), "pixel (\(x), \(y))")
            }
        }
    }

    @Test func theCornerPixelsBecomeTransparent() throws {
        let image = try Support.constant(30, 20, .rgb8, [10, 200, 30])
        let rounded = try RoundCornerTransformer(radius: 6).transform(image, forKey: "k")
        for (x, y) in [(0, 0), (29, 0), (0, 19), (29, 19), (1, 0), (0, 1)] {
            #expect(Support.alpha(rounded, x, y) == 0, "pixel (\(x), \(y))")
        }
        // The straight edges between the corners stay opaque.
        for (x, y) in [(15, 0), (0, 10), (29, 10), (15, 19)] {
            #expect(Support.alpha(rounded, x, y) == 255, "pixel (\(x), \(y))")
        }
    }

    @Test(arguments: [16.0, 100.0])
    func halfTheSideMakesACircle(radius: Double) throws {
        let side = 32
        let image = try Support.constant(side, side, .rgb8, [255, 255, 255])
        let rounded = try RoundCornerTransformer(radius: radius).transform(image, forKey: "k")
        let r = 16.0
        var partial = 0
        for y in 0..<side {
            for x in 0..<side {
                let dx = Double(x) + 0.5 - 16, dy = Double(y) + 0.5 - 16
                let distance = (dx * dx + dy * dy).squareRoot()
                let alpha = Support.alpha(rounded, x, y)
                if distance > r + 1 { #expect(alpha == 0, "pixel (\(x), \(y)) at \(distance)") }
                if distance < r - 1 { #expect(alpha == 255, "pixel (\(x), \(y)) at \(distance)") }
                if alpha > 0 && alpha < 255 {
                    partial += 1
                    #expect(abs(distance - r) <= 1, "pixel (\(x), \(y)) at \(distance) has alpha \(alpha)")
                }
            }
        }
        // Anti-aliasing: the pixels the circle crosses get intermediate alpha.
        #expect(partial >= 20)
    }

    @Test func aRadiusLargerThanHalfTheShortSideActsAsHalfOfIt() throws {
        let image = try Support.distinct(30, 20, .rgba8)
        let clamped = try RoundCornerTransformer(radius: 10).transform(image, forKey: "k")
        let large = try RoundCornerTransformer(radius: 500).transform(image, forKey: "k")
        #expect(Array(large.pixels) == Array(clamped.pixels))
    }

    @Test(arguments: [
        (RoundCornerTransformer.Corners.topLeft, 0, 0),
        (.topRight, 29, 0),
        (.bottomLeft, 0, 19),
        (.bottomRight, 29, 19),
    ])
    func onlySelectedCornersAreRounded(corner: RoundCornerTransformer.Corners, x: Int, y: Int) throws {
        let image = try Support.constant(30, 20, .gray8, [77])
        let rounded = try RoundCornerTransformer(radius: 8, corners: corner).transform(image, forKey: "k")
        for (cx, cy) in [(0, 0), (29, 0), (0, 19), (29, 19)] {
            #expect(Support.alpha(rounded, cx, cy) == ((cx, cy) == (x, y) ? 0 : 255), "corner (\(cx), \(cy))")
        }
    }

    @Test func topLeftOnlyLeavesTheTopRightOpaque() throws {
        let image = try Support.constant(24, 24, .rgb8, [1, 2, 3])
        let rounded = try RoundCornerTransformer(radius: 12, corners: [.topLeft]).transform(image, forKey: "k")
        #expect(Support.alpha(rounded, 0, 0) == 0)
        #expect(Support.alpha(rounded, 23, 0) == 255)
        #expect(Support.alpha(rounded, 0, 23) == 255)
        #expect(Support.alpha(rounded, 23, 23) == 255)
    }

    @Test func radiusZeroOnlyAddsAlpha() throws {
        let image = try Support.distinct(9, 7, .rgb8)
        let rounded = try RoundCornerTransformer(radius: 0).transform(image, forKey: "k")
        let expected = try image.converted(to: .rgba8)
        #expect(Array(rounded.pixels) == Array(expected.pixels))
    }

    @Test func aBorderIsDrawnInsideTheEdge() throws {
        let image = try Support.constant(64, 48, .rgb8, [255, 255, 255])
        let red = PixelColor(red: 255, green: 0, blue: 0)
        let rounded = try RoundCornerTransformer(radius: 8, borderWidth: 4, borderColor: red).transform(image, forKey: "k")
        #expect(rounded.pixelFormat == .rgba8)
        // Midway along each straight edge, the four outer pixels are border, the fifth is the image.
        for offset in 0..<4 {
            #expect(Support.pixel(rounded, offset, 24) == [255, 0, 0, 255], "left edge at \(offset)")
            #expect(Support.pixel(rounded, 63 - offset, 24) == [255, 0, 0, 255], "right edge at \(offset)")
            #expect(Support.pixel(rounded, 32, offset) == [255, 0, 0, 255], "top edge at \(offset)")
            #expect(Support.pixel(rounded, 32, 47 - offset) == [255, 0, 0, 255], "bottom edge at \(offset)")
        }
        #expect(Support.pixel(rounded, 4, 24) == [255, 255, 255, 255])
        #expect(Support.pixel(rounded, 32, 4) == [255, 255, 255, 255])
        #expect(Support.pixel(rounded, 32, 24) == [255, 255, 255, 255])
        #expect(Support.alpha(rounded, 0, 0) == 0)
    }

    @Test func aTranslucentBorderShowsTheImageThrough() throws {
        let image = try Support.constant(40, 40, .rgb8, [255, 255, 255])
        let halfRed = PixelColor(red: 255, green: 0, blue: 0, alpha: 128)
        let rounded = try RoundCornerTransformer(radius: 4, borderWidth: 2, borderColor: halfRed).transform(image, forKey: "k")
        let edge = Support.pixel(rounded, 0, 20)
        // Half red over opaque white: (255, 127, 127), opaque.
        #expect(Support.largestDifference(edge, [255, 127, 127, 255]) <= 1, "edge pixel \(edge)")
    }

    @Test(arguments: [(-1.0, 0.0), (.nan, 0.0), (.infinity, 0.0), (4.0, -1.0), (4.0, .nan)])
    func invalidParametersThrow(radius: Double, borderWidth: Double) throws {
        let image = try Support.constant(10, 10, .rgb8, [1, 2, 3])
        let error = Support.transformError {
            try RoundCornerTransformer(radius: radius, borderWidth: borderWidth).transform(image, forKey: "k")
        }
        #expect(error?.caseName == "invalidParameter")
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Support.distinct(16, 16, .rgba8)
        let before = Array(image.pixels)
        let rounded = try RoundCornerTransformer(radius: 8, borderWidth: 2, borderColor: .white).transform(image, forKey: "k")
        #expect(Support.alpha(rounded, 0, 0) == 0)
        #expect(Array(image.pixels) == before)
    }

    @Test func keys() {
        #expect(RoundCornerTransformer(radius: 16).key == "RoundCornerTransformer(16.000000,15,0.000000,#000000FF)")
        #expect(RoundCornerTransformer(radius: 2.5, corners: [.topLeft, .bottomRight], borderWidth: 1.25,
                                       borderColor: PixelColor(red: 0x12, green: 0xAB, blue: 0xFF, alpha: 0x80)).key
            == "RoundCornerTransformer(2.500000,9,1.250000,#12ABFF80)")
    }

    @Test func cornerBits() {
        #expect(RoundCornerTransformer.Corners.all.rawValue == 15)
        #expect(RoundCornerTransformer.Corners([.topRight, .bottomLeft]).rawValue == 6)
    }
}
