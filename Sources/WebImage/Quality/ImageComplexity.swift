/// How busy a picture is: the mean absolute difference between neighbouring pixels' luma (0–255
/// scale), horizontally and vertically, measured on a copy at most ``sampleSide`` pixels on its
/// longer side. A flat illustration or a screenshot scores about 1–5, a photograph 5–15, heavy film
/// grain or foliage 15 and more. The automatic quality search starts where it says (a busy picture needs a
/// high quality), and the best-format choice also tries lossless encodes for a picture under
/// ``BestFormat/defaultComplexityThreshold``.
public enum ImageComplexity {
    /// The longer side of the copy measured: 256 pixels.
    public static let sampleSide = 256

    /// The complexity of `image`'s first frame (alpha ignored: transparent pixels count as their colour).
    /// - Throws: a conversion's or the downscale's ``ImageCodingError``.
    public static func measure(_ image: Image) throws(ImageCodingError) -> Double {
        var picture = try image.frames[0].image.reducedToEightBits()
        if max(picture.width, picture.height) > sampleSide {
            picture = try Resampler.resample(picture, to: PNGCoder.size(of: picture.size, fittingSide: sampleSide))
        }
        let rgba = try picture.converted(to: .rgba8)
        let (width, height) = (rgba.width, rgba.height)
        guard width > 1 || height > 1 else { return 0 }
        var luma = [Int32](repeating: 0, count: width * height)
        for y in 0..<height {
            rgba.withUnsafeRow(y) { row in
                for x in 0..<width {
                    let r = Int32(row[x * 4]), g = Int32(row[x * 4 + 1]), b = Int32(row[x * 4 + 2])
                    luma[y * width + x] = (r * 77 + g * 150 + b * 29) >> 8
                }
            }
        }
        var total = 0, count = 0
        for y in 0..<height {
            for x in 0..<width {
                let here = luma[y * width + x]
                if x + 1 < width { total += Int(abs(here - luma[y * width + x + 1])); count += 1 }
                if y + 1 < height { total += Int(abs(here - luma[(y + 1) * width + x])); count += 1 }
            }
        }
        return count == 0 ? 0 : Double(total) / Double(count)
    }
}
