/// An image's average and dominant colours, computed on its placeholder-size copy
/// (``PlaceholderPixels``: at most 100×100, first frame, upright).
struct ImageColors: Sendable, Hashable {
    /// The mean colour: red, green and blue weighted by alpha (so transparent pixels count for
    /// nothing), and the mean alpha; fully transparent images give ``PixelColor/clear``.
    var average: PixelColor
    /// The colour most of the image is: pixels are counted in 4096 buckets (4 bits per channel),
    /// the fullest bucket wins (the first in red-green-blue order on a tie), and its pixels' mean
    /// colour is returned. Mostly transparent pixels (alpha < 128) are counted only when nothing
    /// else is there; a fully transparent image gives ``PixelColor/clear``.
    var dominant: PixelColor

    init(pixels: PlaceholderPixels) {
        average = Self.average(pixels.rgba)
        dominant = Self.dominant(pixels.rgba)
    }

    private static func average(_ rgba: [UInt8]) -> PixelColor {
        var sums = [0, 0, 0], alphaSum = 0
        for pixel in stride(from: 0, to: rgba.count, by: 4) {
            let alpha = Int(rgba[pixel + 3])
            for channel in 0..<3 { sums[channel] += Int(rgba[pixel + channel]) * alpha }
            alphaSum += alpha
        }
        guard alphaSum > 0 else { return .clear }
        func mean(_ sum: Int) -> UInt8 { UInt8((sum + alphaSum / 2) / alphaSum) }
        let count = rgba.count / 4
        return PixelColor(red: mean(sums[0]), green: mean(sums[1]), blue: mean(sums[2]), alpha: UInt8((alphaSum + count / 2) / count))
    }

    private static func dominant(_ rgba: [UInt8]) -> PixelColor {
        let minimumAlpha = stride(from: 3, to: rgba.count, by: 4).contains { rgba[$0] >= 128 } ? 128 : 1
        var counts = [Int](repeating: 0, count: 4096)
        for pixel in stride(from: 0, to: rgba.count, by: 4) where Int(rgba[pixel + 3]) >= minimumAlpha {
            counts[bucket(rgba, pixel)] += 1
        }
        guard let best = counts.indices.max(by: { counts[$0] < counts[$1] || (counts[$0] == counts[$1] && $0 > $1) }),
              counts[best] > 0 else { return .clear }
        var sums = [0, 0, 0, 0]
        for pixel in stride(from: 0, to: rgba.count, by: 4) where Int(rgba[pixel + 3]) >= minimumAlpha && bucket(rgba, pixel) == best {
            for channel in 0..<4 { sums[channel] += Int(rgba[pixel + channel]) }
        }
        let count = counts[best]
        func mean(_ sum: Int) -> UInt8 { UInt8((sum + count / 2) / count) }
        return PixelColor(red: mean(sums[0]), green: mean(sums[1]), blue: mean(sums[2]), alpha: mean(sums[3]))
    }

    private static func bucket(_ rgba: [UInt8], _ pixel: Int) -> Int {
        Int(rgba[pixel] >> 4) << 8 | Int(rgba[pixel + 1] >> 4) << 4 | Int(rgba[pixel + 2] >> 4)
    }
}

extension Image {
    /// The image's mean colour: red, green and blue weighted by alpha, and the mean alpha, of its
    /// first frame, upright, scaled down to fit 100×100 (area average). A fully transparent image
    /// gives ``PixelColor/clear``.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` when the small copy cannot be allocated.
    public func averageColor() throws(ImageCodingError) -> PixelColor {
        ImageColors(pixels: try PlaceholderPixels(image: self)).average
    }

    /// The colour most of the image is (on the same small copy as ``averageColor()``): the mean of
    /// the fullest of 4096 colour buckets (4 bits per channel), mostly transparent pixels left out
    /// unless nothing else is there. A fully transparent image gives ``PixelColor/clear``.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` when the small copy cannot be allocated.
    public func dominantColor() throws(ImageCodingError) -> PixelColor {
        ImageColors(pixels: try PlaceholderPixels(image: self)).dominant
    }
}
