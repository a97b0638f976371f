import Foundation
import Testing
@testable import WebImage

@Suite struct RotationTransformerTests {
    typealias Support = TransformerTestSupport

    // MARK: - Quarter turns

    @Test(arguments: PixelFormat.eightBitFormats)
    func ninetyDegreesTurnsClockwise(format: PixelFormat) throws {
        let image = try Support.distinct(5, 3, format)
        let turned = try RotationTransformer(angle: 90).transform(image, forKey: "k")
        #expect(turned.size == PixelSize(width: 3, height: 5))
        #expect(turned.pixelFormat == format)
        // Clockwise: output (x, y) comes from source (y, H - 1 - x); the top-left ends at the top right.
        for y in 0..<5 {
            for x in 0..<3 {
                #expect(Support.pixel(turned, x, y) == Support.pixel(image, y, 2 - x), "pixel (\(x), \(y))")
            }
        }
        #expect(Support.pixel(turned, 2, 0) == Support.pixel(image, 0, 0))
        #expect(Support.pixel(turned, 0, 0) == Support.pixel(image, 0, 2))
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func oneHundredEightyDegrees(format: PixelFormat) throws {
        let image = try Support.distinct(5, 3, format)
        let turned = try RotationTransformer(angle: 180).transform(image, forKey: "k")
        #expect(turned.size == PixelSize(width: 5, height: 3))
        #expect(turned.pixelFormat == format)
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(Support.pixel(turned, x, y) == Support.pixel(image, 4 - x, 2 - y), "pixel (\(x), \(y))")
            }
        }
    }

    @Test(arguments: [270.0, -90.0, 630.0, -450.0])
    func twoHundredSeventyDegreesTurnsCounterClockwise(angle: Double) throws {
        let image = try Support.distinct(5, 3, .rgb8)
        let turned = try RotationTransformer(angle: angle).transform(image, forKey: "k")
        #expect(turned.size == PixelSize(width: 3, height: 5))
        #expect(turned.pixelFormat == .rgb8)
        // Counter-clockwise: output (x, y) comes from source (W - 1 - y, x); the top-left ends at the bottom left.
        for y in 0..<5 {
            for x in 0..<3 {
                #expect(Support.pixel(turned, x, y) == Support.pixel(image, 4 - y, x), "pixel (\(x), \(y))")
            }
        }
        #expect(Support.pixel(turned, 0, 4) == Support.pixel(image, 0, 0))
    }

    @Test func minusNinetyEqualsTwoHundredSeventy() throws {
        let image = try Support.distinct(6, 4, .rgba8)
        let minus = try RotationTransformer(angle: -90).transform(image, forKey: "k")
        let plus = try RotationTransformer(angle: 270).transform(image, forKey: "k")
        #expect(Array(minus.pixels) == Array(plus.pixels))
        #expect(minus.size == plus.size)
    }

    @Test(arguments: [0.0, 360.0, -360.0, 720.0])
    func fullTurnsKeepThePixels(angle: Double) throws {
        let image = try Support.distinct(6, 4, .rgb8)
        let turned = try RotationTransformer(angle: angle).transform(image, forKey: "k")
        #expect(turned.size == image.size)
        #expect(turned.pixelFormat == .rgb8)
        #expect(Array(turned.pixels) == Array(image.pixels))
    }

    @Test func fourQuarterTurnsGiveTheOriginal() throws {
        let image = try Support.distinct(7, 4, .grayAlpha8)
        var turned = image
        for _ in 0..<4 { turned = try RotationTransformer(angle: 90).transform(turned, forKey: "k") }
        #expect(turned.size == image.size)
        #expect(Array(turned.pixels) == Array(image.pixels))
    }

    @Test func quarterTurnsOfASquareKeepTheSizeWithoutFitting() throws {
        let image = try Support.distinct(4, 4, .rgb8)
        let turned = try RotationTransformer(angle: 90, fitSize: false).transform(image, forKey: "k")
        #expect(turned.pixelFormat == .rgb8)
        #expect(Array(turned.pixels) == Array(try RotationTransformer(angle: 90).transform(image, forKey: "k").pixels))
    }

    @Test(arguments: [90.0, 270.0])
    func aQuarterTurnWithoutFittingKeepsTheCanvas(angle: Double) throws {
        // 8x4: the turned 4x8 image is centred on the 8x4 canvas, two columns either side transparent.
        let image = try Support.distinct(8, 4, .rgb8)
        let kept = try RotationTransformer(angle: angle, fitSize: false).transform(image, forKey: "k")
        let fitted = try RotationTransformer(angle: angle).transform(image, forKey: "k")
        #expect(kept.size == PixelSize(width: 8, height: 4))
        #expect(kept.pixelFormat == .rgba8)
        #expect(fitted.size == PixelSize(width: 4, height: 8))
        // The fitted image (4x8) sits at offset (2, -2) on the kept canvas.
        for y in 0..<4 {
            for x in 0..<8 {
                let (fx, fy) = (x - 2, y + 2)
                let pixel = Support.pixel(kept, x, y)
                if (0..<4).contains(fx) {
                    #expect(pixel == Support.pixel(fitted, fx, fy) + [255], "pixel (\(x), \(y))")
                } else {
                    #expect(pixel[3] == 0, "pixel (\(x), \(y))")
                }
            }
        }
    }

    // MARK: - Other angles

    @Test func fitSizeAtFortyFiveDegrees() {
        // SDWebImage: a 300x300 image turned 45° fits in ceil(300·√2) = 425 square.
        let transformer = RotationTransformer(angle: 45)
        #expect(transformer.outputSize(for: PixelSize(width: 300, height: 300)) == PixelSize(width: 425, height: 425))
        for (width, height, angle) in [(20, 10, 45.0), (31, 7, 30.0), (10, 40, -60.0), (13, 9, 100.0)] {
            let radians = angle * .pi / 180
            let expectedWidth = (Double(width) * abs(cos(radians)) + Double(height) * abs(sin(radians))).rounded(.up)
            let expectedHeight = (Double(width) * abs(sin(radians)) + Double(height) * abs(cos(radians))).rounded(.up)
            #expect(RotationTransformer(angle: angle).outputSize(for: PixelSize(width: width, height: height))
                == PixelSize(width: Int(expectedWidth), height: Int(expectedHeight)))
        }
        #expect(RotationTransformer(angle: 45, fitSize: false).outputSize(for: PixelSize(width: 20, height: 10))
            == PixelSize(width: 20, height: 10))
    }

    @Test(arguments: [(PixelFormat.rgb8, PixelFormat.rgba8), (.gray8, .grayAlpha8), (.rgba8, .rgba8), (.grayAlpha8, .grayAlpha8)])
    func fortyFiveDegreesGrowsTheCanvasAndAddsAlpha(source: PixelFormat, expected: PixelFormat) throws {
        // 20x10 with a constant 6x4 block in the middle.
        let image = try Support.image(20, 10, source) { x, y, c in
            let inBlock = (7..<13).contains(x) && (3..<7).contains(y)
            if source.hasAlpha && c == source.bytesPerPixel - 1 { return 255 }
            return inBlock ? [200, 100, 50][c] : UInt8((x * 11 + y * 5 + c) % 256)
        }
        let turned = try RotationTransformer(angle: 45).transform(image, forKey: "k")
        let side = Int((30 * (0.5).squareRoot()).rounded(.up))
        #expect(turned.size == PixelSize(width: side, height: side))
        #expect(turned.pixelFormat == expected)
        for (x, y) in [(0, 0), (side - 1, 0), (0, side - 1), (side - 1, side - 1)] {
            #expect(Support.alpha(turned, x, y) == 0, "corner (\(x), \(y))")
        }
        let centre = Support.pixel(turned, side / 2, side / 2)
        let block: [UInt8] = source.isColor ? [200, 100, 50] : [200]
        #expect(Array(centre.dropLast()) == block)
        #expect(centre.last == 255)
    }

    @Test func positiveAnglesTurnClockwise() throws {
        // White 21x21 with a red patch above the centre: turned 45° clockwise it moves up and right.
        let image = try Support.image(21, 21, .rgb8) { x, y, c in
            (9...11).contains(x) && (1...3).contains(y) ? [255, 0, 0][c] : 255
        }
        let turned = try RotationTransformer(angle: 45).transform(image, forKey: "k")
        #expect(turned.size == PixelSize(width: 30, height: 30))
        // The patch centre is 8 px above the centre (15, 15): 45° clockwise puts it at (20.7, 9.3).
        let right = Support.pixel(turned, 20, 9)
        let left = Support.pixel(turned, 9, 9)
        #expect(right[0] == 255 && right[1] < 60 && right[3] == 255, "up-right pixel \(right)")
        #expect(left == [255, 255, 255, 255], "up-left pixel \(left)")
    }

    @Test func withoutFittingTheSizeIsKept() throws {
        let image = try Support.distinct(20, 10, .rgb8)
        let turned = try RotationTransformer(angle: 45, fitSize: false).transform(image, forKey: "k")
        #expect(turned.size == PixelSize(width: 20, height: 10))
        #expect(turned.pixelFormat == .rgba8)
        #expect(Support.alpha(turned, 10, 5) == 255)
        // A square's corners fall outside the turned square.
        let square = try Support.distinct(12, 12, .gray8)
        let turnedSquare = try RotationTransformer(angle: 45, fitSize: false).transform(square, forKey: "k")
        #expect(turnedSquare.size == PixelSize(width: 12, height: 12))
        #expect(turnedSquare.pixelFormat == .grayAlpha8)
        for (x, y) in [(0, 0), (11, 0), (0, 11), (11, 11)] {
            #expect(Support.alpha(turnedSquare, x, y) == 0, "corner (\(x), \(y))")
        }
        #expect(Support.alpha(turnedSquare, 6, 6) == 255)
    }

    @Test func transparentPixelsDoNotDarkenTheTurnedEdges() throws {
        // Opaque red on a transparent green surround: every visible pixel stays pure red.
        let image = try Support.image(12, 12, .rgba8) { x, y, c in
            (3..<9).contains(x) && (3..<9).contains(y) ? [255, 0, 0, 255][c] : [0, 255, 0, 0][c]
        }
        let turned = try RotationTransformer(angle: 30).transform(image, forKey: "k")
        var partial = 0
        for y in 0..<turned.height {
            for x in 0..<turned.width {
                let pixel = Support.pixel(turned, x, y)
                if pixel[3] > 0 { #expect(Array(pixel.prefix(3)) == [255, 0, 0], "pixel (\(x), \(y)) is \(pixel)") }
                if pixel[3] > 0 && pixel[3] < 255 { partial += 1 }
            }
        }
        #expect(partial > 0)
    }

    // MARK: - Errors, keys, purity

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteAnglesThrow(angle: Double) throws {
        let image = try Support.distinct(4, 4, .rgb8)
        let error = Support.transformError { try RotationTransformer(angle: angle).transform(image, forKey: "k") }
        #expect(error?.caseName == "invalidParameter")
    }

    @Test func keys() {
        #expect(RotationTransformer(angle: 45).key == "RotationTransformer(45.000000,1)")
        #expect(RotationTransformer(angle: -90.5, fitSize: false).key == "RotationTransformer(-90.500000,0)")
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Support.distinct(8, 6, .rgba8)
        let before = Array(image.pixels)
        _ = try RotationTransformer(angle: 90).transform(image, forKey: "k")
        let turned = try RotationTransformer(angle: 33).transform(image, forKey: "k")
        #expect(turned.size != image.size)
        #expect(Array(image.pixels) == before)
    }

    @Test func everyFrameOfAnAnimatedImageIsTurned() throws {
        let first = try Support.distinct(5, 3, .rgb8)
        let second = try Support.image(5, 3, .rgb8) { x, y, c in UInt8(100 + x * 10 + y + c) }
        let animated = try Support.animated([(first, .milliseconds(70)), (second, .milliseconds(30))])
        let turned = try RotationTransformer(angle: 90).transform(animated, forKey: "k")
        #expect(turned.frames.count == 2)
        #expect(turned.frames.map(\.duration) == [.milliseconds(70), .milliseconds(30)])
        #expect(turned.frames.allSatisfy { $0.image.size == PixelSize(width: 3, height: 5) })
        #expect(Support.pixel(turned.frames[1].image, 2, 0) == Support.pixel(second, 0, 0))
    }
}
