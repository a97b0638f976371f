import Testing
@testable import WebImage

@Suite struct ResizingTransformerTests {
    typealias Support = TransformerTestSupport

    // MARK: - Slow reference

    /// How much each of `source` samples contributes to output sample `index` along one axis:
    /// the share of the output pixel's footprint it covers when shrinking; when enlarging, bilinear
    /// weights around the output centre `(index + 0.5) × scale − 0.5`, clamped to the edge samples.
    static func weights(source: Int, target: Int, index: Int) -> [Double] {
        var weights = [Double](repeating: 0, count: source)
        let scale = Double(source) / Double(target)
        if target <= source {
            let start = Double(index) * scale, end = Double(index + 1) * scale
            for s in 0..<source {
                weights[s] = max(0, min(end, Double(s + 1)) - max(start, Double(s))) / scale
            }
        } else {
            let position = min(max((Double(index) + 0.5) * scale - 0.5, 0), Double(source - 1))
            let left = Int(position.rounded(.down))
            let fraction = position - Double(left)
            weights[left] += 1 - fraction
            if left + 1 < source { weights[left + 1] += fraction }
        }
        return weights
    }

    /// The part of `image` inside `region` resized to `size` in double precision, premultiplied by
    /// alpha, each output pixel a weighted sum of every source pixel.
    static func reference(_ image: Image, region: PixelRect? = nil, to size: PixelSize) -> [UInt8] {
        let region = region ?? PixelRect(x: 0, y: 0, width: image.width, height: image.height)
        let channels = image.pixelFormat.bytesPerPixel
        let hasAlpha = image.pixelFormat.hasAlpha
        let source = Support.packed(image)
        let columns = (0..<size.width).map { weights(source: region.width, target: size.width, index: $0) }
        let rows = (0..<size.height).map { weights(source: region.height, target: size.height, index: $0) }
        var out: [UInt8] = []
        for oy in 0..<size.height {
            for ox in 0..<size.width {
                var sums = [Double](repeating: 0, count: channels)
                for y in 0..<region.height where rows[oy][y] > 0 {
                    for x in 0..<region.width where columns[ox][x] > 0 {
                        let weight = rows[oy][y] * columns[ox][x]
                        let base = ((region.y + y) * image.width + region.x + x) * channels
                        let alpha = hasAlpha ? Double(source[base + channels - 1]) / 255 : 1
                        for c in 0..<channels {
                            let isAlpha = hasAlpha && c == channels - 1
                            sums[c] += weight * Double(source[base + c]) * (isAlpha ? 1 : alpha)
                        }
                    }
                }
                let alpha = hasAlpha ? sums[channels - 1] : 255
                for c in 0..<channels {
                    let isAlpha = hasAlpha && c == channels - 1
                    let value = isAlpha ? sums[c] : (alpha > 0 ? sums[c] * 255 / alpha : 0)
                    out.append(UInt8(min(255, max(0, value.rounded()))))
                }
            }
        }
        return out
    }

    static func checkerboard(_ width: Int, _ height: Int) throws -> Image {
        try Support.image(width, height, .gray8) { x, y, _ in (x + y) % 2 == 0 ? 255 : 0 }
    }

    /// Red grows left to right, green top to bottom, blue along the diagonal; alpha (if any) stays
    /// above 60 so un-premultiplying does not magnify rounding.
    static func gradient(_ width: Int, _ height: Int, _ format: PixelFormat) throws -> Image {
        try Support.image(width, height, format) { x, y, c in
            let horizontal = UInt8(x * 255 / max(1, width - 1))
            let vertical = UInt8(y * 255 / max(1, height - 1))
            let isAlpha = format.hasAlpha && c == format.bytesPerPixel - 1
            if isAlpha { return UInt8(60 + (x + 2 * y) * 195 / (width + 2 * height - 3)) }
            if !format.isColor { return UInt8((Int(horizontal) + Int(vertical)) / 2) }
            return [horizontal, vertical, UInt8((x * 255 / width + y * 255 / height) / 2)][c]
        }
    }

    func expectGolden(_ image: Image, mode: ResizingTransformer.ScaleMode = .fill, region: PixelRect? = nil,
                      to size: PixelSize, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let resized = try ResizingTransformer(size: size, scaleMode: mode).transform(image, forKey: "k")
        #expect(resized.size == size, sourceLocation: sourceLocation)
        #expect(resized.pixelFormat == image.pixelFormat, sourceLocation: sourceLocation)
        let worst = Support.largestDifference(Support.packed(resized), Self.reference(image, region: region, to: size))
        #expect(worst <= 1, "largest channel difference \(worst)", sourceLocation: sourceLocation)
    }

    // MARK: - Sizes

    @Test(arguments: [
        (300, 200, 100, 100, ResizingTransformer.ScaleMode.fill, 100, 100),
        (300, 200, 100, 100, .aspectFit, 100, 67),
        (300, 200, 100, 100, .aspectFill, 100, 100),
        (200, 300, 100, 100, .aspectFit, 67, 100),
        (200, 300, 100, 100, .aspectFill, 100, 100),
        (300, 200, 50, 100, .fill, 50, 100),
        (300, 200, 50, 100, .aspectFit, 50, 33),
        (300, 200, 50, 100, .aspectFill, 50, 100),
        (30, 20, 90, 90, .aspectFit, 90, 60),
        (30, 20, 90, 90, .aspectFill, 90, 90),
        (30, 20, 45, 10, .aspectFit, 15, 10),
        (1, 1, 3, 2, .aspectFit, 2, 2),
    ])
    func outputSizes(width: Int, height: Int, targetWidth: Int, targetHeight: Int,
                     mode: ResizingTransformer.ScaleMode, expectedWidth: Int, expectedHeight: Int) throws {
        let image = try Support.constant(width, height, .gray8, [90])
        let resized = try ResizingTransformer(size: PixelSize(width: targetWidth, height: targetHeight), scaleMode: mode)
            .transform(image, forKey: "k")
        #expect(resized.size == PixelSize(width: expectedWidth, height: expectedHeight))
        #expect(Array(resized.pixels).allSatisfy { $0 == 90 })
    }

    @Test func aspectFillUsesTheCentredRegion() {
        let transformer = ResizingTransformer(size: PixelSize(width: 100, height: 100), scaleMode: .aspectFill)
        let plan = transformer.plan(for: PixelSize(width: 300, height: 200))
        #expect(plan.region == PixelRect(x: 50, y: 0, width: 200, height: 200))
        #expect(plan.size == PixelSize(width: 100, height: 100))
        let tall = transformer.plan(for: PixelSize(width: 200, height: 300))
        #expect(tall.region == PixelRect(x: 0, y: 50, width: 200, height: 200))
    }

    @Test func defaultModeIsFill() {
        #expect(ResizingTransformer(size: PixelSize(width: 4, height: 5)).scaleMode == .fill)
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func pixelFormatIsKept(format: PixelFormat) throws {
        let image = try Self.gradient(12, 10, format)
        for size in [PixelSize(width: 5, height: 4), PixelSize(width: 20, height: 17)] {
            for mode in ResizingTransformer.ScaleMode.allCases {
                let resized = try ResizingTransformer(size: size, scaleMode: mode).transform(image, forKey: "k")
                #expect(resized.pixelFormat == format)
                #expect(resized.bytesPerRow == resized.width * format.bytesPerPixel)
                #expect(resized.pixels.count == resized.bytesPerRow * resized.height)
            }
        }
    }

    // MARK: - Golden pixels

    @Test(arguments: [(64, 48, 17, 13), (7, 5, 20, 13), (64, 48, 100, 20), (9, 30, 4, 31)])
    func checkerboardMatchesTheReference(width: Int, height: Int, targetWidth: Int, targetHeight: Int) throws {
        try expectGolden(try Self.checkerboard(width, height), to: PixelSize(width: targetWidth, height: targetHeight))
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func gradientMatchesTheReference(format: PixelFormat) throws {
        try expectGolden(try Self.gradient(64, 48, format), to: PixelSize(width: 17, height: 13))
        try expectGolden(try Self.gradient(7, 5, format), to: PixelSize(width: 20, height: 13))
        try expectGolden(try Self.gradient(40, 6, format), to: PixelSize(width: 13, height: 15))
    }

    @Test func shrinkingACheckerboardByAWholeFactorGivesMidGray() throws {
        let resized = try ResizingTransformer(size: PixelSize(width: 8, height: 6)).transform(try Self.checkerboard(64, 48), forKey: "k")
        #expect(Array(resized.pixels).allSatisfy { $0 == 127 || $0 == 128 })
    }

    @Test func enlargingInterpolatesBetweenNeighbours() throws {
        let image = try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 200])
        let resized = try ResizingTransformer(size: PixelSize(width: 4, height: 1)).transform(image, forKey: "k")
        #expect(Array(resized.pixels) == [0, 50, 150, 200])
    }

    @Test(arguments: PixelFormat.eightBitFormats)
    func aspectFillMatchesTheReferenceOnTheCentredCrop(format: PixelFormat) throws {
        // 64x48 → 20x20: scale 20/48, so a 48x48 square from x = 8.
        try expectGolden(try Self.gradient(64, 48, format), mode: .aspectFill,
                         region: PixelRect(x: 8, y: 0, width: 48, height: 48), to: PixelSize(width: 20, height: 20))
        // 48x64 → 20x30: scale 30/64, so 20 / (30/64) = 42.7 → 43 columns from x = 2.
        try expectGolden(try Self.gradient(48, 64, format), mode: .aspectFill,
                         region: PixelRect(x: 2, y: 0, width: 43, height: 64), to: PixelSize(width: 20, height: 30))
        // 7x5 → 20x20 (enlarging): scale 4, so a 5x5 square from x = 1.
        try expectGolden(try Self.gradient(7, 5, format), mode: .aspectFill,
                         region: PixelRect(x: 1, y: 0, width: 5, height: 5), to: PixelSize(width: 20, height: 20))
        // 30x60 → 10x10: a 30x30 square from y = 15.
        try expectGolden(try Self.gradient(30, 60, format), mode: .aspectFill,
                         region: PixelRect(x: 0, y: 15, width: 30, height: 30), to: PixelSize(width: 10, height: 10))
    }

    @Test func aspectFitMatchesTheReferenceOnTheWholeImage() throws {
        // 64x48 → 20x20 fits as 20x15.
        try expectGolden(try Self.gradient(64, 48, .rgba8), mode: .aspectFit, to: PixelSize(width: 20, height: 15))
    }

    // MARK: - Alpha

    @Test(arguments: [PixelSize(width: 3, height: 2), PixelSize(width: 5, height: 3), PixelSize(width: 11, height: 5)])
    func transparentNeighboursDoNotBleedIntoColour(size: PixelSize) throws {
        // Left half opaque red, right half fully transparent green.
        let image = try Support.image(8, 4, .rgba8) { x, _, c in
            x < 4 ? [255, 0, 0, 255][c] : [0, 255, 0, 0][c]
        }
        let resized = try ResizingTransformer(size: size).transform(image, forKey: "k")
        var partial = 0
        for y in 0..<resized.height {
            for x in 0..<resized.width {
                let pixel = Support.pixel(resized, x, y)
                if pixel[3] > 0 {
                    #expect(Array(pixel[0..<3]) == [255, 0, 0], "pixel (\(x), \(y)) is \(pixel)")
                }
                if pixel[3] > 0 && pixel[3] < 255 { partial += 1 }
            }
        }
        #expect(partial > 0, "the boundary must blend some alpha for the test to mean anything")
    }

    @Test func grayAlphaIsFilteredPremultipliedToo() throws {
        let image = try Support.image(6, 2, .grayAlpha8) { x, _, c in x < 4 ? [200, 255][c] : [0, 0][c] }
        let resized = try ResizingTransformer(size: PixelSize(width: 4, height: 1)).transform(image, forKey: "k")
        #expect(Support.pixel(resized, 1, 0) == [200, 255])
        let middle = Support.pixel(resized, 2, 0)
        #expect(middle[0] == 200)
        #expect(middle[1] > 0 && middle[1] < 255)
    }

    // MARK: - Errors and purity

    @Test(arguments: [PixelSize(width: 0, height: 10), PixelSize(width: 10, height: 0), PixelSize(width: -3, height: 5)])
    func nonPositiveSizesThrowInvalidParameter(size: PixelSize) throws {
        let image = try Support.constant(4, 4, .rgb8, [1, 2, 3])
        for mode in ResizingTransformer.ScaleMode.allCases {
            let error = Support.transformError { try ResizingTransformer(size: size, scaleMode: mode).transform(image, forKey: "k") }
            #expect(error?.caseName == "invalidParameter")
        }
    }

    @Test func theSourceImageIsNotChanged() throws {
        let image = try Self.gradient(30, 20, .rgba8)
        let before = Array(image.pixels)
        for (size, mode) in [(PixelSize(width: 10, height: 10), ResizingTransformer.ScaleMode.fill),
                             (PixelSize(width: 50, height: 50), .aspectFit), (PixelSize(width: 12, height: 12), .aspectFill)] {
            let resized = try ResizingTransformer(size: size, scaleMode: mode).transform(image, forKey: "k")
            #expect(resized.size != image.size)
        }
        #expect(Array(image.pixels) == before)
        #expect(image.size == PixelSize(width: 30, height: 20))
    }

    @Test func theSameSizeKeepsThePixels() throws {
        let image = try Self.gradient(9, 7, .rgb8)
        let resized = try ResizingTransformer(size: PixelSize(width: 9, height: 7)).transform(image, forKey: "k")
        #expect(Array(resized.pixels) == Array(image.pixels))
    }

    @Test func keys() {
        #expect(ResizingTransformer(size: PixelSize(width: 256, height: 256), scaleMode: .aspectFill).key
            == "ResizingTransformer(256x256,aspectFill)")
        #expect(ResizingTransformer(size: PixelSize(width: 100, height: 50)).key == "ResizingTransformer(100x50,fill)")
        #expect(ResizingTransformer(size: PixelSize(width: 1, height: 2), scaleMode: .aspectFit).key
            == "ResizingTransformer(1x2,aspectFit)")
    }

    // MARK: - Animation and orientation

    @Test func everyFrameOfAnAnimatedImageIsResized() throws {
        let first = try Self.gradient(20, 10, .rgba8)
        let second = try Self.checkerboard(20, 10).converted(to: .rgba8)
        let animated = try Support.animated([(first, .milliseconds(100)), (second, .milliseconds(250))])
        let transformer = ResizingTransformer(size: PixelSize(width: 8, height: 6))
        let resized = try transformer.transform(animated, forKey: "k")
        #expect(resized.isAnimated)
        #expect(resized.frames.count == 2)
        #expect(resized.frames.map(\.duration) == [.milliseconds(100), .milliseconds(250)])
        #expect(resized.frames.allSatisfy { $0.image.size == PixelSize(width: 8, height: 6) })
        #expect(Array(resized.frames[0].image.pixels) == Array(try transformer.transform(first, forKey: "k").pixels))
        #expect(Array(resized.frames[1].image.pixels) == Array(try transformer.transform(second, forKey: "k").pixels))
    }

    @Test func orientedImagesAreResizedUpright() throws {
        // Stored 6x4, displayed turned 90° clockwise: 4x6 upright, so a 2x3 target is a whole factor.
        let stored = try Support.distinct(6, 4, .rgb8)
        let image = try Image(width: 6, height: 4, pixelFormat: .rgb8, pixels: stored.pixels, orientation: .right)
        let resized = try ResizingTransformer(size: PixelSize(width: 2, height: 3)).transform(image, forKey: "k")
        // Upright (x, y) is stored (y, 3 - x).
        let upright = try Support.image(4, 6, .rgb8) { x, y, c in Support.pixel(stored, y, 3 - x)[c] }
        #expect(resized.orientation == .up)
        #expect(resized.size == PixelSize(width: 2, height: 3))
        #expect(Support.largestDifference(Array(resized.pixels), Self.reference(upright, to: PixelSize(width: 2, height: 3))) <= 1)
    }
}
