import Testing
@testable import WebImage

@Suite struct ResamplerTests {
    /// The slow, obviously correct area average: integrate the source over each output pixel's
    /// footprint in double precision, premultiplying by alpha.
    func reference(_ image: Image, to size: PixelSize) -> [UInt8] {
        let channels = image.pixelFormat.bytesPerPixel
        let alpha = image.pixelFormat.hasAlpha
        let source = Array(image.pixels)
        let sx = Double(image.width) / Double(size.width)
        let sy = Double(image.height) / Double(size.height)
        var out: [UInt8] = []
        for oy in 0..<size.height {
            for ox in 0..<size.width {
                var sums = [Double](repeating: 0, count: channels)
                for y in 0..<image.height {
                    let coverY = max(0, min(Double(y + 1), Double(oy + 1) * sy) - max(Double(y), Double(oy) * sy))
                    if coverY == 0 { continue }
                    for x in 0..<image.width {
                        let coverX = max(0, min(Double(x + 1), Double(ox + 1) * sx) - max(Double(x), Double(ox) * sx))
                        if coverX == 0 { continue }
                        let weight = coverX * coverY / (sx * sy)
                        let base = (y * image.width + x) * channels
                        let a = alpha ? Double(source[base + channels - 1]) : 255
                        for c in 0..<channels {
                            let isAlpha = alpha && c == channels - 1
                            sums[c] += weight * Double(source[base + c]) * (isAlpha ? 1 : a / 255)
                        }
                    }
                }
                let a = alpha ? sums[channels - 1] : 255
                for c in 0..<channels {
                    let isAlpha = alpha && c == channels - 1
                    let value = isAlpha ? sums[c] : (a > 0 ? sums[c] * 255 / a : 0)
                    out.append(UInt8(min(255, max(0, value.rounded()))))
                }
            }
        }
        return out
    }

    func assertClose(_ actual: [UInt8], _ expected: [UInt8], tolerance: Int = 1) {
        #expect(actual.count == expected.count)
        let worst = zip(actual, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
        #expect(worst <= tolerance, "largest channel difference \(worst)")
    }

    @Test func shrinkingACheckerboardAveragesItToGray() throws {
        let pixels = (0..<64).flatMap { y in (0..<64).map { x in UInt8((x + y) % 2 == 0 ? 255 : 0) } }
        let image = try Image(width: 64, height: 64, pixelFormat: .gray8, pixels: pixels)
        let small = try Resampler.resample(image, to: PixelSize(width: 8, height: 8))
        #expect(Array(small.pixels).allSatisfy { $0 == 128 || $0 == 127 })
    }

    @Test(arguments: [(37, 23, 10, 7), (64, 48, 17, 13), (30, 30, 29, 29), (12, 9, 5, 9)])
    func shrinkingMatchesTheExactAreaAverage(width: Int, height: Int, targetWidth: Int, targetHeight: Int) throws {
        var pixels: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let red = UInt8((x * 255) / width)
                let green = UInt8((y * 255) / height)
                let blue = UInt8((x * y) % 256)
                pixels += [red, green, blue]
            }
        }
        let image = try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
        let size = PixelSize(width: targetWidth, height: targetHeight)
        assertClose(Array(try Resampler.resample(image, to: size).pixels), reference(image, to: size))
    }

    /// The taps of one axis, padded to one count with every tap inside the source: each output's
    /// weights sum to 1; shrinking, every source sample is shared out whole among the outputs (its
    /// weights times the scale sum to 1: area averaging); enlarging, a linear ramp is reproduced
    /// exactly at each output's centre (bilinear).
    @Test(arguments: [(1020, 512), (2040, 512), (37, 10), (30, 29), (64, 8), (5, 9), (1, 4), (512, 512)])
    func tapsShareOutTheSourceAsTheFilterSays(source: Int, target: Int) {
        let taps = Resampler.Taps(source: source, target: target)
        let scale = Double(source) / Double(target)
        #expect(taps.firsts.count == target && taps.weights.count == target * taps.count)
        #expect(taps.count >= 1 && taps.count <= (scale >= 1 ? Int(scale.rounded(.up)) + 1 : 2))
        var shares = [Double](repeating: 0, count: source)
        for i in 0..<target {
            let first = taps.firsts[i]
            #expect(first >= 0 && first + taps.count <= source)
            let weights = taps.weights[i * taps.count ..< (i + 1) * taps.count]
            #expect(abs(weights.reduce(0, +) - 1) < 1e-5, "output \(i): weights sum to \(weights.reduce(0, +))")
            for (k, weight) in weights.enumerated() { shares[first + k] += Double(weight) }
            if scale < 1 && source > 1 {
                let ramp = zip(weights, first...).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
                let centre = min(max((Double(i) + 0.5) * scale - 0.5, 0), Double(source - 1))
                #expect(abs(ramp - centre) < 1e-5, "output \(i): \(ramp) for \(centre)")
            }
        }
        if scale >= 1 {
            for (sample, share) in shares.enumerated() {
                #expect(abs(share * scale - 1) < 1e-4, "source sample \(sample) is shared out \(share * scale) times")
            }
        }
    }

    @Test func alphaIsFilteredPremultipliedWithoutDarkFringes() throws {
        // Left half transparent black, right half opaque red: the blended column must stay pure red.
        let pixels = (0..<4).flatMap { _ in [0, 0, 0, 0, 0, 0, 0, 0, 255, 0, 0, 255, 255, 0, 0, 255] as [UInt8] }
        let image = try Image(width: 4, height: 4, pixelFormat: .rgba8, pixels: pixels)
        let size = PixelSize(width: 3, height: 2)
        let out = Array(try Resampler.resample(image, to: size).pixels)
        assertClose(out, reference(image, to: size))
        #expect(out[4] == 255 && out[5] == 0 && out[6] == 0)   // middle pixel: red, half transparent
        #expect(out[7] == 128 || out[7] == 127)
    }

    @Test func aConstantImageStaysConstant() throws {
        let image = try Image(width: 50, height: 40, pixelFormat: .grayAlpha8, pixels: [UInt8](repeating: 77, count: 4000))
        for size in [PixelSize(width: 7, height: 3), PixelSize(width: 120, height: 90)] {
            #expect(Array(try Resampler.resample(image, to: size).pixels).allSatisfy { $0 == 77 })
        }
    }

    @Test func enlargingInterpolatesBetweenNeighbours() throws {
        let image = try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 200])
        let wide = Array(try Resampler.resample(image, to: PixelSize(width: 4, height: 1)).pixels)
        #expect(wide == [0, 50, 150, 200])
    }
}
