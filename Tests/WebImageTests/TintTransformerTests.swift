import Testing
@testable import WebImage

@Suite struct TintTransformerTests {
    typealias Support = TransformerTestSupport

    static let red = PixelColor(red: 255, green: 0, blue: 0)

    @Test(arguments: [PixelFormat.rgb8, .rgba8])
    func anOpaqueTintReplacesEveryColourAndKeepsAlpha(format: PixelFormat) throws {
        let image = try Support.image(9, 7, format, value: Support.random(9, 7, format, seed: 11))
        let colour = PixelColor(red: 12, green: 200, blue: 77)
        let tinted = try TintTransformer(color: colour).transform(image, forKey: "k")
        #expect(tinted.pixelFormat == format)
        #expect(tinted.size == image.size)
        for y in 0..<7 {
            for x in 0..<9 {
                let pixel = Support.pixel(tinted, x, y)
                #expect(Array(pixel.prefix(3)) == [12, 200, 77], "pixel (\(x), \(y))")
                if format.hasAlpha { #expect(pixel[3] == Support.pixel(image, x, y)[3], "alpha at (\(x), \(y))") }
            }
        }
    }

    @Test(arguments: [PixelFormat.rgb8, .rgba8])
    func aHalfTintIsHalfway(format: PixelFormat) throws {
        let image = try Support.image(9, 7, format, value: Support.random(9, 7, format, seed: 12))
        let colour = PixelColor(red: 255, green: 0, blue: 128, alpha: 128)
        let tinted = try TintTransformer(color: colour).transform(image, forKey: "k")
        #expect(tinted.pixelFormat == format)
        for y in 0..<7 {
            for x in 0..<9 {
                let source = Support.pixel(image, x, y)
                let pixel = Support.pixel(tinted, x, y)
                let halfway = [255, 0, 128].enumerated().map { c, tint in (Double(tint) + Double(source[c])) / 2 }
                for c in 0..<3 {
                    #expect(abs(Double(pixel[c]) - halfway[c]) <= 1, "channel \(c) at (\(x), \(y)): \(pixel[c]) vs \(halfway[c])")
                }
                if format.hasAlpha { #expect(pixel[3] == source[3]) }
            }
        }
    }

    @Test func aTransparentTintChangesNothing() throws {
        let image = try Support.distinct(6, 5, .rgba8)
        let tinted = try TintTransformer(color: PixelColor(red: 255, green: 0, blue: 0, alpha: 0)).transform(image, forKey: "k")
        #expect(Array(tinted.pixels) == Array(image.pixels))
    }

    @Test func grayStaysGrayUnderAGrayTint() throws {
        let image = try Support.image(8, 4, .gray8) { x, y, _ in UInt8(x * 30 + y) }
        let tinted = try TintTransformer(color: PixelColor(red: 200, green: 200, blue: 200, alpha: 128)).transform(image, forKey: "k")
        #expect(tinted.pixelFormat == .gray8)
        for y in 0..<4 {
            for x in 0..<8 {
                let halfway = (200 + Double(x * 30 + y)) / 2
                #expect(abs(Double(Support.pixel(tinted, x, y)[0]) - halfway) <= 1, "pixel (\(x), \(y))")
            }
        }
        let opaque = try TintTransformer(color: .white).transform(image, forKey: "k")
        #expect(opaque.pixelFormat == .gray8)
        #expect(Array(opaque.pixels).allSatisfy { $0 == 255 })
    }

    @Test func grayBecomesColourUnderARedTint() throws {
        let image = try Support.image(8, 4, .gray8) { x, _, _ in UInt8(x * 30) }
        let opaque = try TintTransformer(color: Self.red).transform(image, forKey: "k")
        #expect(opaque.pixelFormat == .rgb8)
        #expect(opaque.size == image.size)
        #expect(Array(opaque.pixels) == Array(repeating: [255, 0, 0] as [UInt8], count: 32).flatMap { $0 })
        let half = try TintTransformer(color: PixelColor(red: 255, green: 0, blue: 0, alpha: 128)).transform(image, forKey: "k")
        #expect(half.pixelFormat == .rgb8)
        let pixel = Support.pixel(half, 4, 0)   // gray 120
        #expect(abs(Int(pixel[0]) - 188) <= 1 && abs(Int(pixel[1]) - 60) <= 1 && pixel[1] == pixel[2], "\(pixel)")
    }

    @Test func grayAlphaBecomesRGBAUnderARedTint() throws {
        let image = try Support.image(5, 3, .grayAlpha8) { x, y, c in c == 0 ? UInt8(x * 40) : UInt8(50 * y + x) }
        let tinted = try TintTransformer(color: Self.red).transform(image, forKey: "k")
        #expect(tinted.pixelFormat == .rgba8)
        for y in 0..<3 {
            for x in 0..<5 {
                #expect(Support.pixel(tinted, x, y) == [255, 0, 0, UInt8(50 * y + x)], "pixel (\(x), \(y))")
            }
        }
        let gray = try TintTransformer(color: .black).transform(image, forKey: "k")
        #expect(gray.pixelFormat == .grayAlpha8)
        #expect(Support.pixel(gray, 4, 2) == [0, 104])
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Support.distinct(8, 6, .rgba8)
        let before = Array(image.pixels)
        let tinted = try TintTransformer(color: Self.red).transform(image, forKey: "k")
        #expect(Support.pixel(tinted, 3, 3).prefix(3) == [255, 0, 0])
        #expect(Array(image.pixels) == before)
    }

    @Test func keys() {
        #expect(TintTransformer(color: PixelColor(red: 255, green: 0, blue: 0, alpha: 128)).key == "TintTransformer(#FF000080)")
        #expect(TintTransformer(color: .white).key == "TintTransformer(#FFFFFFFF)")
        #expect(TintTransformer(color: PixelColor(red: 1, green: 0xAB, blue: 0x0C)).key == "TintTransformer(#01AB0CFF)")
    }

    @Test func everyFrameOfAnAnimatedImageIsTinted() throws {
        let first = try Support.distinct(4, 3, .rgb8)
        let second = try Support.constant(4, 3, .rgb8, [9, 9, 9])
        let animated = try Support.animated([(first, .milliseconds(10)), (second, .milliseconds(20))])
        let tinted = try TintTransformer(color: Self.red).transform(animated, forKey: "k")
        #expect(tinted.frames.count == 2)
        #expect(tinted.frames.map(\.duration) == [.milliseconds(10), .milliseconds(20)])
        for frame in tinted.frames {
            #expect(Array(frame.image.pixels) == Array(repeating: [255, 0, 0] as [UInt8], count: 12).flatMap { $0 })
        }
    }
}
