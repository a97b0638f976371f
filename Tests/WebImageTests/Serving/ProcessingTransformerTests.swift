import Foundation
import Testing
@testable import WebImage

/// The pixel steps of `ProcessingTransformer` beyond sizes (which `ImgproxyCasesTests` covers):
/// where crops and extensions land, what trim removes, how padding, background, sharpen and
/// pixelate change pixels, and the limit on absurd outputs.
@Suite struct ProcessingTransformerTests {
    typealias Watermarks = WatermarkTests

    func run(_ image: Image, _ change: (inout ProcessingOptions) -> Void) throws -> Image {
        var options = ProcessingOptions()
        change(&options)
        return try ProcessingTransformer(options: options).transform(image, forKey: "")
    }

    /// `size` of `background` with a `content`-coloured rectangle at `rect`.
    static func framed(_ size: PixelSize, background: (UInt8, UInt8, UInt8), content: (UInt8, UInt8, UInt8), rect: PixelRect) throws -> Image {
        var pixels = [UInt8]()
        for y in 0..<size.height {
            for x in 0..<size.width {
                let inside = x >= rect.x && x < rect.x + rect.width && y >= rect.y && y < rect.y + rect.height
                let colour = inside ? content : background
                pixels += [colour.0, colour.1, colour.2]
            }
        }
        return try Image(width: size.width, height: size.height, pixelFormat: .rgb8, pixels: pixels)
    }

    @Test func trimRemovesAUniformBorderAndNothingElse() throws {
        let image = try Self.framed(PixelSize(width: 350, height: 250), background: (255, 255, 255), content: (20, 40, 200),
                                    rect: PixelRect(x: 15, y: 15, width: 320, height: 220))
        #expect(try run(image) { $0.trim = ProcessingOptions.Trim(threshold: 5) }.size == PixelSize(width: 320, height: 220))
        let offCentre = try Self.framed(PixelSize(width: 200, height: 200), background: (0, 0, 0), content: (250, 250, 250),
                                        rect: PixelRect(x: 10, y: 40, width: 100, height: 100))
        #expect(try run(offCentre) { $0.trim = ProcessingOptions.Trim(threshold: 10) }.size == PixelSize(width: 100, height: 100))
        let equal = try run(offCentre) { $0.trim = ProcessingOptions.Trim(threshold: 10, equalHorizontal: true, equalVertical: true) }
        #expect(equal.size == PixelSize(width: 180, height: 120), "equal margins: the smaller of each pair (10 and 40)")
        let coloured = try run(offCentre) { $0.trim = ProcessingOptions.Trim(threshold: 10, color: PixelColor(red: 250, green: 250, blue: 250)) }
        #expect(coloured.size == offCentre.size, "a border colour that is not the border's removes nothing")
        let flat = try Self.framed(PixelSize(width: 50, height: 50), background: (9, 9, 9), content: (9, 9, 9), rect: PixelRect(x: 0, y: 0, width: 1, height: 1))
        #expect(try run(flat) { $0.trim = ProcessingOptions.Trim(threshold: 10) }.size == flat.size, "a uniform image is left whole")
        let faint = try run(image) { $0.trim = ProcessingOptions.Trim(threshold: 250) }
        #expect(faint.size == image.size, "a threshold above every difference finds no content: nothing is removed")
    }

    @Test func aCentredCropLandsWhereImgproxysDoes() throws {
        // A 50x50 centred crop of 200x100 starts at (76, 26): imgproxy rounds (d + 1) / 2 half to even.
        let marker = try Self.framed(PixelSize(width: 200, height: 100), background: (0, 0, 0), content: (255, 0, 0),
                                     rect: PixelRect(x: 76, y: 26, width: 1, height: 1))
        let cropped = try run(marker) { $0.crop = ProcessingOptions.Crop(width: 50, height: 50) }
        #expect(try Watermarks.pixel(cropped, 0, 0) == [255, 0, 0, 255])
        let north = try run(marker) {
            $0.crop = ProcessingOptions.Crop(width: 50, height: 50, gravity: Gravity(.northEast, x: 10, y: 5))
        }
        #expect(north.size == PixelSize(width: 50, height: 50))
        let focus = try Self.framed(PixelSize(width: 200, height: 100), background: (0, 0, 0), content: (0, 255, 0),
                                    rect: PixelRect(x: 150, y: 75, width: 1, height: 1))
        let focused = try run(focus) { $0.crop = ProcessingOptions.Crop(width: 20, height: 20, gravity: Gravity(.focusPoint, x: 0.75, y: 0.75)) }
        #expect(try Watermarks.pixel(focused, 10, 10) == [0, 255, 0, 255], "the focus point is the crop's centre")
    }

    @Test func extendAndPaddingFillWithTheBackgroundOrTransparency() throws {
        let red = try Self.framed(PixelSize(width: 20, height: 10), background: (255, 0, 0), content: (255, 0, 0), rect: PixelRect(x: 0, y: 0, width: 0, height: 0))
        let extended = try run(red) {
            (($0.width, $0.height), $0.extend) = ((40, 40), ProcessingOptions.Extension(gravity: Gravity(.south)))
        }
        #expect(extended.size == PixelSize(width: 40, height: 40) && extended.pixelFormat.hasAlpha)
        #expect(try Watermarks.pixel(extended, 20, 35) == [255, 0, 0, 255] && Watermarks.pixel(extended, 20, 5)[3] == 0,
                "south: the image at the bottom, transparent above")
        let padded = try run(red) {
            $0.padding = ProcessingOptions.Padding(top: 1, right: 2, bottom: 3, left: 4)
            $0.background = PixelColor(red: 0, green: 0, blue: 255)
        }
        #expect(padded.size == PixelSize(width: 26, height: 14) && !padded.pixelFormat.hasAlpha)
        #expect(try Watermarks.pixel(padded, 0, 0) == [0, 0, 255, 255] && Watermarks.pixel(padded, 4, 1) == [255, 0, 0, 255])
        #expect(try Watermarks.pixel(padded, 25, 13) == [0, 0, 255, 255])
    }

    @Test func backgroundFlattensTransparency() throws {
        let clear = try Watermarks.solid(PixelSize(width: 4, height: 4), (10, 20, 30, 0))
        let flat = try run(clear) { $0.background = PixelColor(red: 200, green: 100, blue: 50) }
        #expect(try !flat.pixelFormat.hasAlpha && Watermarks.pixel(flat, 1, 1) == [200, 100, 50, 255])
        let half = try Watermarks.solid(PixelSize(width: 4, height: 4), (0, 0, 0, 128))
        #expect(try Watermarks.pixel(try run(half) { $0.background = PixelColor(red: 255, green: 255, blue: 255) }, 0, 0) == [127, 127, 127, 255])
    }

    @Test func sharpenRaisesEdgeContrastAndLeavesFlatAreas() throws {
        let edge = try Self.framed(PixelSize(width: 40, height: 40), background: (100, 100, 100), content: (160, 160, 160),
                                   rect: PixelRect(x: 20, y: 0, width: 20, height: 40))
        let sharp = try run(edge) { $0.sharpenSigma = 2 }
        #expect(try Watermarks.pixel(sharp, 19, 20)[0] < 100 && Watermarks.pixel(sharp, 20, 20)[0] > 160, "overshoot on both sides of the edge")
        #expect(try Watermarks.pixel(sharp, 2, 20)[0] == 100 && Watermarks.pixel(sharp, 38, 20)[0] == 160, "flat areas unchanged")
    }

    @Test func pixelateAveragesBlocks() throws {
        var pixels = [UInt8]()
        for y in 0..<4 { for x in 0..<6 { let v = UInt8((x + y) % 2 == 0 ? 0 : 200); pixels += [v, v, v] } }
        let checker = try Image(width: 6, height: 4, pixelFormat: .rgb8, pixels: pixels)
        let blocks = try run(checker) { $0.pixelateSize = 2 }
        #expect(blocks.size == checker.size)
        for x in 0..<6 { for y in 0..<4 { #expect(try Watermarks.pixel(blocks, x, y) == [100, 100, 100, 255]) } }
        let uneven = try run(checker) { $0.pixelateSize = 4 }
        #expect(try Watermarks.pixel(uneven, 5, 3) == [100, 100, 100, 255], "the last blocks are smaller")
    }

    @Test func absurdOutputsAreRefusedBeforeAnyAllocation() throws {
        let small = try Watermarks.solid(PixelSize(width: 2, height: 2), (1, 2, 3, 255))
        #expect(throws: ImageTransformError.self) {
            _ = try run(small) { (($0.width, $0.height), $0.extend) = ((60_000, 60_000), ProcessingOptions.Extension()) }
        }
        #expect(throws: ImageTransformError.self) {
            _ = try run(small) { (($0.width, $0.height), $0.enlarge, $0.devicePixelRatio) = ((20_000, 20_000), true, 30) }
        }
        #expect(throws: ImageTransformError.self) { _ = try run(small) { $0.padding = ProcessingOptions.Padding(top: 16_384, right: 16_384, bottom: 16_384, left: 16_384) } }
    }

    @Test func theKeyNamesEverySettingThatDiffersFromItsDefault() {
        var options = ProcessingOptions()
        #expect(options.key == "" && options.isIdentity)
        (options.resizingType, options.width, options.height, options.gravity) = (.fill, 300, 200, Gravity(.smart))
        options.padding = ProcessingOptions.Padding(top: 10)
        options.background = PixelColor(red: 255, green: 0, blue: 16)
        #expect(options.key == "rs:fill:300:200/g:sm/pd:10:0:0:0/bg:ff0010")
        #expect(ProcessingTransformer(options: options).key == "Processing(rs:fill:300:200/g:sm/pd:10:0:0:0/bg:ff0010)")
    }
}
