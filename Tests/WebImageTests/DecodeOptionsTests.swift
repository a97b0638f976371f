import Testing
@testable import WebImage

@Suite struct DecodeOptionsTests {
    func size(_ w: Int, _ h: Int) -> PixelSize { PixelSize(width: w, height: h) }

    func thumbnail(_ source: PixelSize, into box: PixelSize, preservingAspectRatio: Bool = true) -> PixelSize {
        DecodeOptions(thumbnailPixelSize: box, preservesAspectRatio: preservingAspectRatio).outputSize(forSource: source)
    }

    @Test func thumbnailFitsInsideTheBoxKeepingTheAspectRatio() {
        #expect(thumbnail(size(5250, 3450), into: size(400, 300)) == size(400, 263))
        #expect(thumbnail(size(100, 200), into: size(150, 150)) == size(75, 150))
        #expect(thumbnail(size(3000, 1000), into: size(300, 300)) == size(300, 100))
    }

    @Test func thumbnailIsNeverLargerThanTheSource() {
        #expect(thumbnail(size(100, 80), into: size(400, 300)) == size(100, 80))
        #expect(thumbnail(size(100, 80), into: size(100, 80)) == size(100, 80))
        #expect(thumbnail(size(100, 80), into: size(0, 0)) == size(100, 80))
    }

    @Test func onePixelBoxYieldsOnePixel() {
        #expect(thumbnail(size(5250, 3450), into: size(1, 1)) == size(1, 1))
        #expect(thumbnail(size(10000, 10), into: size(1, 1)) == size(1, 1))
    }

    @Test func thumbnailWithoutAspectRatioIsExactButNotEnlarged() {
        #expect(thumbnail(size(5250, 3450), into: size(400, 300), preservingAspectRatio: false) == size(400, 300))
        #expect(thumbnail(size(200, 100), into: size(400, 50), preservingAspectRatio: false) == size(200, 50))
    }

    @Test func maxPixelCountScalesDownKeepingTheAspectRatio() {
        let options = DecodeOptions(maxPixelCount: 1_000_000)
        let out = options.outputSize(forSource: size(4000, 3000))
        #expect(out.pixelCount <= 1_000_000)
        #expect(out.pixelCount > 990_000)
        #expect(abs(Double(out.width) / Double(out.height) - 4.0 / 3.0) < 0.01)
        #expect(options.outputSize(forSource: size(800, 600)) == size(800, 600))
    }

    @Test func defaultsMatchTheDocumentation() {
        let options = DecodeOptions()
        #expect(options.thumbnailPixelSize == nil)
        #expect(options.applyOrientation)
        #expect(options.pixelCountLimit == 100_000_000)
        #expect(options.maxPixelCount == nil)
        #expect(DecodeOptions.scaleDownPixelCount == 15_728_640)
        #expect(options.outputSize(forSource: size(7000, 5000)) == size(7000, 5000))
    }
}

extension DecodeOptionsTests {
    @Test func aCoveringThumbnailIsTheSmallestImageThatCoversTheBox() throws {
        var options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 400, height: 300))
        options.thumbnailCoversBox = true
        #expect(options.outputSize(forSource: PixelSize(width: 5250, height: 3450)) == PixelSize(width: 457, height: 300))
        #expect(options.outputSize(forSource: PixelSize(width: 3450, height: 5250)) == PixelSize(width: 400, height: 609))
        #expect(options.outputSize(forSource: PixelSize(width: 500, height: 200)) == PixelSize(width: 500, height: 200),
                "a source that does not cover the box stays whole")
        let jpeg = try encodedPicture(width: 800, height: 400, as: .jpeg)
        var half = DecodeOptions(thumbnailPixelSize: PixelSize(width: 100, height: 100))
        half.thumbnailCoversBox = true
        #expect(try JPEGCoder().decode(jpeg, options: half).size == PixelSize(width: 200, height: 100), "JPEG's DCT path covers too")
        #expect(try PNGCoder().decode(try encodedPicture(width: 800, height: 400, as: .png), options: half).size == PixelSize(width: 200, height: 100))
    }
}
