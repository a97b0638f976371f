import Foundation
import Testing
@testable import WebImage

@Suite struct BlurTransformerTests {
    typealias Support = TransformerTestSupport

    // MARK: - Slow reference

    /// The box size of the CSS/SVG rule: d = ⌊σ · 3·√(2π) / 4 + 0.5⌋.
    static func boxSize(sigma: Double) -> Int {
        Int((sigma * 3 * (2 * Double.pi).squareRoot() / 4 + 0.5).rounded(.down))
    }

    /// The three boxes as the closed ranges of offsets each one averages.
    static func boxOffsets(_ d: Int) -> [ClosedRange<Int>] {
        if d % 2 == 1 { return Array(repeating: (-(d / 2))...(d / 2), count: 3) }
        return [(-(d / 2))...(d / 2 - 1), (-(d / 2) + 1)...(d / 2), (-(d / 2))...(d / 2)]
    }

    /// Three box blurs horizontally, then three vertically, edges clamped, in double precision,
    /// colour premultiplied by alpha.
    static func reference(_ image: Image, boxSize d: Int) -> [UInt8] {
        let width = image.width, height = image.height
        let channels = image.pixelFormat.bytesPerPixel
        let hasAlpha = image.pixelFormat.hasAlpha
        let source = Support.packed(image)
        var planes = (0..<channels).map { c in
            (0..<(width * height)).map { i -> Double in
                let value = Double(source[i * channels + c])
                guard hasAlpha && c != channels - 1 else { return value }
                return value * Double(source[i * channels + channels - 1]) / 255
            }
        }
        for offsets in boxOffsets(d) {
            for c in 0..<channels {
                let plane = planes[c]
                for y in 0..<height {
                    for x in 0..<width {
                        let total = offsets.reduce(0.0) { $0 + plane[y * width + min(max(x + $1, 0), width - 1)] }
                        planes[c][y * width + x] = total / Double(offsets.count)
                    }
                }
            }
        }
        for offsets in boxOffsets(d) {
            for c in 0..<channels {
                let plane = planes[c]
                for y in 0..<height {
                    for x in 0..<width {
                        let total = offsets.reduce(0.0) { $0 + plane[min(max(y + $1, 0), height - 1) * width + x] }
                        planes[c][y * width + x] = total / Double(offsets.count)
                    }
                }
            }
        }
        var out: [UInt8] = []
        for i in 0..<(width * height) {
            let alpha = hasAlpha ? planes[channels - 1][i] : 255
            for c in 0..<channels {
                var value = planes[c][i]
                if hasAlpha && c != channels - 1 { value = alpha > 0 ? value * 255 / alpha : 0 }
                out.append(UInt8(min(255, max(0, value.rounded()))))
            }
        }
        return out
    }

    // MARK: - Against the reference

    @Test func boxSizesFollowTheSpecification() {
        #expect(Self.boxSize(sigma: 1) == 2)
        #expect(Self.boxSize(sigma: 5) == 9)
        #expect(Self.boxSize(sigma: 20) == 38)
        #expect(BoxBlur(boxSize: 5).boxes.map { [$0.before, $0.after] } == [[2, 2], [2, 2], [2, 2]])
        #expect(BoxBlur(boxSize: 6).boxes.map { [$0.before, $0.after] } == [[3, 2], [2, 3], [3, 3]])
    }

    @Test(arguments: [2, 3, 4, 5, 6, 9, 40])
    func boxBlurMatchesTheReference(boxSize: Int) throws {
        for format in [PixelFormat.rgb8, .gray8] {
            let image = try Support.image(23, 17, format, value: Support.random(23, 17, format, seed: UInt64(boxSize)))
            let blurred = try BoxBlur(boxSize: boxSize).blur(image)
            #expect(blurred.size == image.size)
            #expect(blurred.pixelFormat == format)
            let worst = Support.largestDifference(Support.packed(blurred), Self.reference(image, boxSize: boxSize))
            #expect(worst <= 2, "\(format), box \(boxSize): largest channel difference \(worst)")
        }
    }

    @Test(arguments: [2, 5, 6])
    func boxBlurMatchesTheReferenceWithAlpha(boxSize: Int) throws {
        for format in [PixelFormat.rgba8, .grayAlpha8] {
            let values = Support.random(19, 13, format, seed: 100 + UInt64(boxSize), alphaRange: 128...255)
            let image = try Support.image(19, 13, format, value: values)
            let blurred = try BoxBlur(boxSize: boxSize).blur(image)
            let worst = Support.largestDifference(Support.packed(blurred), Self.reference(image, boxSize: boxSize))
            #expect(worst <= 2, "\(format), box \(boxSize): largest channel difference \(worst)")
        }
    }

    @Test(arguments: [1.0, 1.5, 3.0, 5.0, 20.0])
    func blurTransformerMatchesTheReference(radius: Double) throws {
        let image = try Support.image(21, 15, .rgb8, value: Support.random(21, 15, .rgb8, seed: 42))
        let blurred = try BlurTransformer(radius: radius).transform(image, forKey: "k")
        let worst = Support.largestDifference(Support.packed(blurred), Self.reference(image, boxSize: Self.boxSize(sigma: radius)))
        #expect(worst <= 2, "radius \(radius): largest channel difference \(worst)")
        #expect(Array(blurred.pixels) != Array(image.pixels))
    }

    // MARK: - Properties

    @Test(arguments: [5.0, 20.0, 100_000.0])
    func aConstantImageStaysTheSameConstant(radius: Double) throws {
        for (format, pixel) in [(PixelFormat.rgb8, [10, 200, 77] as [UInt8]), (.rgba8, [10, 200, 77, 90]),
                                (.gray8, [123]), (.grayAlpha8, [123, 3]), (.rgba8, [255, 255, 255, 255])] {
            let image = try Support.constant(17, 11, format, pixel)
            let blurred = try BlurTransformer(radius: radius).transform(image, forKey: "k")
            #expect(blurred.pixelFormat == format)
            #expect(blurred.size == image.size)
            #expect(Array(blurred.pixels) == Array(image.pixels), "\(format) \(pixel) radius \(radius)")
        }
    }

    @Test(arguments: [0.0, 0.2, 0.3])
    func radiiTooSmallToMoveAPixelReturnTheImage(radius: Double) throws {
        let image = try Support.distinct(8, 6, .rgba8)
        let blurred = try BlurTransformer(radius: radius).transform(image, forKey: "k")
        #expect(blurred === image)
        #expect(Array(blurred.pixels) == Array(image.pixels))
    }

    @Test(arguments: [1.5, 3.0])
    func aDotSpreadsSymmetricallyAndKeepsItsBrightness(radius: Double) throws {
        let image = try Support.image(31, 31, .gray8) { x, y, _ in x == 15 && y == 15 ? 255 : 0 }
        let blurred = try BlurTransformer(radius: radius).transform(image, forKey: "k")
        let values = Array(blurred.pixels).map(Int.init)
        func at(_ x: Int, _ y: Int) -> Int { values[y * 31 + x] }
        for dy in 0...15 {
            for dx in 0...15 {
                #expect(at(15 + dx, 15 + dy) == at(15 - dx, 15 + dy), "left/right at (\(dx), \(dy))")
                #expect(at(15 + dx, 15 + dy) == at(15 + dx, 15 - dy), "up/down at (\(dx), \(dy))")
            }
        }
        // The dot spread out: its centre dimmed, its neighbours lit, the peak still in the middle.
        #expect(at(15, 15) < 255 && at(15, 15) > 0)
        #expect(at(16, 15) > 0 && at(15, 16) > 0)
        #expect(values.max() == at(15, 15))
        // Far from the edges, nothing is lost or gained (bar rounding).
        let sum = values.reduce(0, +)
        #expect(abs(sum - 255) <= 13, "sum \(sum)")
    }

    @Test(arguments: [PixelColor(red: 255, green: 0, blue: 0), PixelColor(red: 200, green: 100, blue: 50)])
    func transparentPixelsDoNotDarkenTheColour(colour: PixelColor) throws {
        // Left half opaque colour, right half fully transparent green.
        let image = try Support.image(20, 10, .rgba8) { x, _, c in
            x < 10 ? [colour.red, colour.green, colour.blue, 255][c] : [0, 255, 0, 0][c]
        }
        let blurred = try BlurTransformer(radius: 3).transform(image, forKey: "k")
        var partial = 0
        for y in 0..<10 {
            for x in 0..<20 {
                let pixel = Support.pixel(blurred, x, y)
                guard pixel[3] > 0 else { continue }
                if pixel[3] < 255 { partial += 1 }
                let tolerance = pixel[3] >= 16 ? 1 : 4
                let worst = Support.largestDifference(Array(pixel.prefix(3)), [colour.red, colour.green, colour.blue])
                #expect(worst <= tolerance, "pixel (\(x), \(y)) is \(pixel)")
            }
        }
        #expect(partial >= 20)
        // The alpha itself fades across the boundary.
        #expect(Support.alpha(blurred, 0, 5) == 255)
        #expect(Support.alpha(blurred, 19, 5) == 0)
        #expect(Support.alpha(blurred, 9, 5) > 128 && Support.alpha(blurred, 10, 5) < 128)
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func pixelFormatIsKept(format: PixelFormat) throws {
        let image = try Support.distinct(12, 9, format)
        let blurred = try BlurTransformer(radius: 2).transform(image, forKey: "k")
        #expect(blurred.pixelFormat == format)
        #expect(blurred.size == image.size)
        #expect(blurred.bytesPerRow == 12 * format.bytesPerPixel)
    }

    @Test(arguments: [-1.0, -0.001, .nan, .infinity])
    func invalidRadiiThrow(radius: Double) throws {
        let image = try Support.distinct(4, 4, .rgb8)
        let error = Support.transformError { try BlurTransformer(radius: radius).transform(image, forKey: "k") }
        #expect(error?.caseName == "invalidParameter")
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Support.distinct(10, 8, .rgba8)
        let before = Array(image.pixels)
        let blurred = try BlurTransformer(radius: 4).transform(image, forKey: "k")
        #expect(Array(blurred.pixels) != before)
        #expect(Array(image.pixels) == before)
    }

    @Test func keys() {
        #expect(BlurTransformer(radius: 20).key == "BlurTransformer(20.000000)")
        #expect(BlurTransformer(radius: 0.5).key == "BlurTransformer(0.500000)")
    }

    @Test func everyFrameOfAnAnimatedImageIsBlurred() throws {
        let first = try Support.image(9, 9, .gray8) { x, y, _ in x == 4 && y == 4 ? 255 : 0 }
        let second = try Support.constant(9, 9, .gray8, [40])
        let animated = try Support.animated([(first, .milliseconds(50)), (second, .milliseconds(80))])
        let blurred = try BlurTransformer(radius: 1).transform(animated, forKey: "k")
        #expect(blurred.frames.count == 2)
        #expect(blurred.frames.map(\.duration) == [.milliseconds(50), .milliseconds(80)])
        #expect(Array(blurred.frames[0].image.pixels) == Array(try BlurTransformer(radius: 1).transform(first, forKey: "k").pixels))
        #expect(Array(blurred.frames[1].image.pixels).allSatisfy { $0 == 40 })
    }

    @Test func aRadiusTooSmallToMoveAPixelStillReturnsTheUprightImage() throws {
        let stored = try Support.distinct(5, 3, .rgb8)
        let image = try Image(width: 5, height: 3, pixelFormat: .rgb8, pixels: stored.pixels, orientation: .right)
        let result = try BlurTransformer(radius: 0.1).transform(image, forKey: "k")
        #expect(result.orientation == .up && result.size == PixelSize(width: 3, height: 5))
        #expect(Array(result.pixels) == Array(try image.oriented().pixels))
    }
}
