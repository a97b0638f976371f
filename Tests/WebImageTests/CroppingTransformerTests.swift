import Testing
@testable import WebImage

@Suite struct CroppingTransformerTests {
    typealias Support = TransformerTestSupport

    /// The bytes of the pixels of `image` inside `rect` (which must lie inside the image), row by row.
    func expectedBytes(_ image: Image, _ rect: PixelRect) -> [UInt8] {
        var bytes: [UInt8] = []
        for y in rect.y..<(rect.y + rect.height) {
            for x in rect.x..<(rect.x + rect.width) { bytes += Support.pixel(image, x, y) }
        }
        return bytes
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func cropKeepsExactlyThePixelsInsideTheRectangle(format: PixelFormat) throws {
        let image = try Support.distinct(30, 20, format)
        let rect = PixelRect(x: 7, y: 3, width: 11, height: 9)
        let cropped = try CroppingTransformer(rect: rect).transform(image, forKey: "k")
        #expect(cropped.size == PixelSize(width: 11, height: 9))
        #expect(cropped.pixelFormat == format)
        #expect(Support.packed(cropped) == expectedBytes(image, rect))
        // The first pixel is source (7, 3): x and y are in the first two channels of rgb8.
        if format == .rgb8 { #expect(Support.pixel(cropped, 0, 0)[0..<2] == [7, 3]) }
    }

    @Test func aSinglePixelCrop() throws {
        let image = try Support.distinct(5, 4, .rgba8)
        let cropped = try CroppingTransformer(rect: PixelRect(x: 4, y: 3, width: 1, height: 1)).transform(image, forKey: "k")
        #expect(cropped.size == PixelSize(width: 1, height: 1))
        #expect(Array(cropped.pixels) == Support.pixel(image, 4, 3))
    }

    @Test(arguments: [
        (PixelRect(x: 20, y: 15, width: 100, height: 100), PixelRect(x: 20, y: 15, width: 10, height: 5)),
        (PixelRect(x: -5, y: -3, width: 10, height: 8), PixelRect(x: 0, y: 0, width: 5, height: 5)),
        (PixelRect(x: -10, y: 4, width: 100, height: 2), PixelRect(x: 0, y: 4, width: 30, height: 2)),
        (PixelRect(x: 29, y: 19, width: 2, height: 2), PixelRect(x: 29, y: 19, width: 1, height: 1)),
    ])
    func rectanglesPartlyOutsideAreClipped(rect: PixelRect, kept: PixelRect) throws {
        let image = try Support.distinct(30, 20, .rgb8)
        let cropped = try CroppingTransformer(rect: rect).transform(image, forKey: "k")
        #expect(cropped.size == kept.size)
        #expect(Support.packed(cropped) == expectedBytes(image, kept))
    }

    @Test func theWholeImageKeepsEveryPixel() throws {
        let image = try Support.distinct(6, 5, .grayAlpha8)
        let cropped = try CroppingTransformer(rect: PixelRect(x: -1, y: -1, width: 10, height: 10)).transform(image, forKey: "k")
        #expect(cropped.size == image.size)
        #expect(Array(cropped.pixels) == Array(image.pixels))
    }

    @Test(arguments: [
        PixelRect(x: 30, y: 0, width: 10, height: 10),
        PixelRect(x: 0, y: 20, width: 10, height: 10),
        PixelRect(x: -10, y: 0, width: 10, height: 10),
        PixelRect(x: 0, y: -10, width: 5, height: 10),
        PixelRect(x: 100, y: 100, width: 5, height: 5),
        PixelRect(x: 5, y: 5, width: 0, height: 5),
        PixelRect(x: 5, y: 5, width: 5, height: -1),
    ])
    func rectanglesOutsideThrowEmptyResult(rect: PixelRect) throws {
        let image = try Support.distinct(30, 20, .rgb8)
        let error = Support.transformError { try CroppingTransformer(rect: rect).transform(image, forKey: "k") }
        #expect(error?.caseName == "emptyResult")
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Support.distinct(12, 10, .rgba8)
        let before = Array(image.pixels)
        let cropped = try CroppingTransformer(rect: PixelRect(x: 2, y: 2, width: 5, height: 5)).transform(image, forKey: "k")
        #expect(cropped.size == PixelSize(width: 5, height: 5))
        #expect(Array(image.pixels) == before)
    }

    @Test func keys() {
        #expect(CroppingTransformer(rect: PixelRect(x: 10, y: 20, width: 100, height: 50)).key == "CroppingTransformer(10,20,100x50)")
        #expect(CroppingTransformer(rect: PixelRect(x: -1, y: 0, width: 3, height: 4)).key == "CroppingTransformer(-1,0,3x4)")
    }

    @Test func orientationIsAppliedBeforeCropping() throws {
        // Stored 5x3 with orientation .right (displayed turned 90° clockwise): upright it is 3x5,
        // and upright pixel (x, y) is stored pixel (y, 2 - x).
        let stored = try Support.distinct(5, 3, .rgb8)
        let image = try Image(width: 5, height: 3, pixelFormat: .rgb8, pixels: stored.pixels, orientation: .right)
        let rect = PixelRect(x: 1, y: 2, width: 2, height: 3)
        let cropped = try CroppingTransformer(rect: rect).transform(image, forKey: "k")
        #expect(cropped.size == PixelSize(width: 2, height: 3))
        #expect(cropped.orientation == .up)
        var expected: [UInt8] = []
        for y in 2..<5 {
            for x in 1..<3 { expected += Support.pixel(stored, y, 2 - x) }
        }
        #expect(Array(cropped.pixels) == expected)
        // The upright image is only 3 wide: a crop from x = 3 leaves nothing although the stored image is 5 wide.
        let error = Support.transformError {
            try CroppingTransformer(rect: PixelRect(x: 3, y: 0, width: 2, height: 2)).transform(image, forKey: "k")
        }
        #expect(error?.caseName == "emptyResult")
    }

    @Test func everyFrameOfAnAnimatedImageIsCropped() throws {
        let first = try Support.distinct(10, 8, .rgb8)
        let second = try Support.image(10, 8, .rgb8) { x, y, c in UInt8(200 - x - y - c) }
        let animated = try Support.animated([(first, .milliseconds(40)), (second, .milliseconds(60))])
        let rect = PixelRect(x: 2, y: 1, width: 4, height: 5)
        let cropped = try CroppingTransformer(rect: rect).transform(animated, forKey: "k")
        #expect(cropped.frames.count == 2)
        #expect(cropped.frames.map(\.duration) == [.milliseconds(40), .milliseconds(60)])
        #expect(Array(cropped.frames[0].image.pixels) == expectedBytes(first, rect))
        #expect(Array(cropped.frames[1].image.pixels) == expectedBytes(second, rect))
    }
}
