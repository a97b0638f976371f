import Foundation
import Testing
@testable import WebImage

/// The watermark step: where the picture lands (imgproxy's placement), how it blends, scales and tiles.
@Suite struct WatermarkTests {
    static func solid(_ size: PixelSize, _ rgba: (UInt8, UInt8, UInt8, UInt8)) throws -> Image {
        var pixels = [UInt8]()
        for _ in 0..<(size.width * size.height) { pixels += [rgba.0, rgba.1, rgba.2, rgba.3] }
        return try Image(width: size.width, height: size.height, pixelFormat: .rgba8, pixels: pixels)
    }

    static func pixel(_ image: Image, _ x: Int, _ y: Int) throws -> [UInt8] {
        let rgba = try image.converted(to: .rgba8)
        return Array(rgba.pixels[(y * rgba.width + x) * 4..<(y * rgba.width + x) * 4 + 4])
    }

    func watermarked(_ placement: ProcessingOptions.Watermark, on size: PixelSize = PixelSize(width: 100, height: 100),
                     mark: Image? = nil, dpr: Double = 1) throws -> Image {
        var options = ProcessingOptions()
        options.watermark = placement
        options.devicePixelRatio = dpr
        options.enlarge = dpr > 1   // without enlarge, imgproxy's rules cap the ratio at the source's size
        let picture = try mark ?? Self.solid(PixelSize(width: 10, height: 10), (255, 0, 0, 255))
        let white = try Self.solid(size, (255, 255, 255, 255)).converted(to: .rgb8)
        return try ProcessingTransformer(options: options, watermark: try WatermarkImage(image: picture)).transform(white, forKey: "")
    }

    @Test func itLandsWhereItsGravitySays() throws {
        let corner = try watermarked(ProcessingOptions.Watermark(position: Gravity(.northWest)))
        #expect(try Self.pixel(corner, 0, 0) == [255, 0, 0, 255] && Self.pixel(corner, 10, 10) == [255, 255, 255, 255])
        let southEast = try watermarked(ProcessingOptions.Watermark(position: Gravity(.southEast, x: 5, y: 5)))
        #expect(try Self.pixel(southEast, 85, 85) == [255, 0, 0, 255] && Self.pixel(southEast, 95, 95) == [255, 255, 255, 255],
                "offsets move it away from the south-east edges")
        let centre = try watermarked(ProcessingOptions.Watermark())
        // imgproxy centres at roundEven((100 - 10 + 1) / 2) = 46: columns 46...55.
        #expect(try Self.pixel(centre, 46, 46) == [255, 0, 0, 255] && Self.pixel(centre, 45, 50) == [255, 255, 255, 255])
        #expect(try Self.pixel(centre, 55, 55) == [255, 0, 0, 255] && Self.pixel(centre, 56, 50) == [255, 255, 255, 255])
        #expect(centre.size == PixelSize(width: 100, height: 100), "a watermark never changes the size")
    }

    @Test func opacityBlendsAndAHangingWatermarkIsClipped() throws {
        let half = try watermarked(ProcessingOptions.Watermark(opacity: 0.5, position: Gravity(.northWest)))
        #expect(try Self.pixel(half, 3, 3) == [255, 127, 127, 255] || Self.pixel(half, 3, 3) == [255, 128, 128, 255])
        let hanging = try watermarked(ProcessingOptions.Watermark(position: Gravity(.west, x: -5)))
        #expect(try Self.pixel(hanging, 0, 50) == [255, 0, 0, 255] && Self.pixel(hanging, 5, 50) == [255, 255, 255, 255])
        let invisible = try watermarked(ProcessingOptions.Watermark(opacity: 0))
        #expect(try Self.pixel(invisible, 50, 50) == [255, 255, 255, 255])
    }

    @Test func pixelOffsetsFollowTheDevicePixelRatio() throws {
        var options = ProcessingOptions.Watermark(position: Gravity(.northWest, x: 10, y: 10))
        let doubled = try watermarked(options, dpr: 2)
        #expect(doubled.size == PixelSize(width: 200, height: 200))
        #expect(try Self.pixel(doubled, 20, 20) == [255, 0, 0, 255] && Self.pixel(doubled, 15, 15) == [255, 255, 255, 255])
        options.position = Gravity(.northWest, x: 0.5, y: 0)
        #expect(try Self.pixel(try watermarked(options), 50, 0) == [255, 0, 0, 255], "under 1: a fraction of the image")
    }

    @Test func scaleFitsItIntoAFractionOfTheImage() throws {
        let scaled = try watermarked(ProcessingOptions.Watermark(position: Gravity(.northWest), scale: 0.5))
        #expect(try Self.pixel(scaled, 49, 49) == [255, 0, 0, 255] && Self.pixel(scaled, 50, 50) == [255, 255, 255, 255],
                "10x10 enlarged to fit 50x50")
    }

    @Test func replicateTilesAnOddNumberOfTimesCentred() throws {
        // 10x10 tiles spaced by 10 (padding 5 each side): 20x20 cells, 5 across and 5 down for 100x100,
        // the 100x100 window centred in the 100x100 tiling: each cell's red square sits at 5...14.
        let tiled = try watermarked(ProcessingOptions.Watermark(position: Gravity(.center, x: 10, y: 10), replicates: true))
        for cell in 0..<5 {
            #expect(try Self.pixel(tiled, cell * 20 + 5, cell * 20 + 5) == [255, 0, 0, 255])
            #expect(try Self.pixel(tiled, cell * 20 + 2, cell * 20 + 2) == [255, 255, 255, 255])
        }
    }

    @Test func aHugeTileSpacingStaysBounded() throws {
        let tiled = try watermarked(ProcessingOptions.Watermark(position: Gravity(.center, x: 65_000, y: 65_000), replicates: true))
        #expect(tiled.size == PixelSize(width: 100, height: 100))
        #expect(try Self.pixel(tiled, 50, 50) == [255, 0, 0, 255], "one tile, centred")
    }

    @Test func theWatermarkPictureIsPartOfTheKey() throws {
        var options = ProcessingOptions()
        options.watermark = ProcessingOptions.Watermark(opacity: 0.5)
        let red = try WatermarkImage(image: Self.solid(PixelSize(width: 4, height: 4), (255, 0, 0, 255)))
        let blue = try WatermarkImage(image: Self.solid(PixelSize(width: 4, height: 4), (0, 0, 255, 255)))
        #expect(ProcessingTransformer(options: options, watermark: red).key != ProcessingTransformer(options: options, watermark: blue).key)
        #expect(ProcessingTransformer(options: ProcessingOptions(), watermark: red).key == "Processing()", "no watermark option: no picture in the key")
    }
}
