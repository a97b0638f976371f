import Foundation

/// Finds where a crop should go to keep what a person looks at (smart gravity, `g:sm`), in the
/// manner of libvips' "attention" strategy: on a small copy of the image, each pixel scores for its
/// edges (the luminance's Laplacian), its colour saturation and how close it is to a skin tone,
/// weighted by its opacity; the crop window with the highest total wins (ties: the one nearest the
/// centre). The copy is at most ``analysisSide`` pixels on its long side, so the cost is a small
/// resample plus a summed-area table, whatever the image's size.
enum SmartCrop {
    /// The long side of the copy the scores are computed on.
    static let analysisSide = 128

    /// The top-left corner of the best `crop`-sized window in `image` (`crop` at most the image's size).
    static func origin(of crop: PixelSize, in image: Image) throws -> (x: Int, y: Int) {
        let width = image.width, height = image.height
        guard crop.width < width || crop.height < height else { return (0, 0) }
        let factor = min(1, Double(analysisSide) / Double(max(width, height)))
        let small = factor < 1
            ? try Resampler.resample(image, to: PixelSize(width: max(1, Int((Double(width) * factor).rounded())),
                                                          height: max(1, Int((Double(height) * factor).rounded()))))
            : image
        let scaleX = Double(small.width) / Double(width), scaleY = Double(small.height) / Double(height)
        let scores = Self.scores(of: small)
        let windowWidth = min(small.width, max(1, Int((Double(crop.width) * scaleX).rounded())))
        let windowHeight = min(small.height, max(1, Int((Double(crop.height) * scaleY).rounded())))
        guard let best = Self.bestWindow(scores, width: small.width, height: small.height,
                                         window: PixelSize(width: windowWidth, height: windowHeight)) else {
            return ((width - crop.width) / 2, (height - crop.height) / 2)
        }
        let x = Int((Double(best.x) / scaleX).rounded()), y = Int((Double(best.y) / scaleY).rounded())
        return (min(max(x, 0), width - crop.width), min(max(y, 0), height - crop.height))
    }

    /// Each pixel's attention score: edges + saturation + skin, times opacity.
    static func scores(of image: Image) -> [Float] {
        let width = image.width, height = image.height
        var luminance = [Float](repeating: 0, count: width * height)
        var colour = [Float](repeating: 0, count: width * height)
        var opacity = [Float](repeating: 0, count: width * height)
        var rgba = [UInt8](repeating: 0, count: width * 4)
        for y in 0..<height {
            rgba.withUnsafeMutableBytes { target in
                image.withUnsafeRow(y) { source in Image.expandToRGBA(source, from: image.pixelFormat, into: target, width: width) }
            }
            for x in 0..<width {
                let r = Float(rgba[x * 4]) / 255, g = Float(rgba[x * 4 + 1]) / 255, b = Float(rgba[x * 4 + 2]) / 255
                let lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
                let index = y * width + x
                luminance[index] = lum
                opacity[index] = Float(rgba[x * 4 + 3]) / 255
                let saturation = max(r, g, b) - min(r, g, b)
                // Skin: the direction of (r, g, b) against a typical skin tone's, in a mid-luminance band.
                let length = (r * r + g * g + b * b).squareRoot()
                var skin: Float = 0
                if length > 0, lum > 0.15, lum < 0.95 {
                    let dr = r / length - 0.78, dg = g / length - 0.57, db = b / length - 0.44
                    skin = max(0, 1 - (dr * dr + dg * dg + db * db).squareRoot() * 4)
                }
                colour[index] = saturation * 0.6 + skin
            }
        }
        var scores = [Float](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                let centre = luminance[index]
                let left = x > 0 ? luminance[index - 1] : centre, right = x + 1 < width ? luminance[index + 1] : centre
                let up = y > 0 ? luminance[index - width] : centre, down = y + 1 < height ? luminance[index + width] : centre
                let edge = abs(4 * centre - left - right - up - down)
                scores[index] = (edge * 4 + colour[index]) * opacity[index]
            }
        }
        return scores
    }

    /// The window of `window` size with the highest sum of `scores` (a summed-area table makes each
    /// window one lookup); among equal sums, the one whose centre is nearest the image's centre.
    /// `nil` when no window beats the centred one (a uniform image, or the subject in the middle).
    static func bestWindow(_ scores: [Float], width: Int, height: Int, window: PixelSize) -> (x: Int, y: Int)? {
        var table = [Double](repeating: 0, count: (width + 1) * (height + 1))
        for y in 0..<height {
            var rowSum = 0.0
            for x in 0..<width {
                rowSum += Double(scores[y * width + x])
                table[(y + 1) * (width + 1) + x + 1] = table[y * (width + 1) + x + 1] + rowSum
            }
        }
        func sum(_ x: Int, _ y: Int) -> Double {
            let stride = width + 1
            return table[(y + window.height) * stride + x + window.width] - table[y * stride + x + window.width]
                - table[(y + window.height) * stride + x] + table[y * stride + x]
        }
        let centred = (x: (width - window.width) / 2, y: (height - window.height) / 2)
        var best = centred
        var bestSum = sum(best.x, best.y)
        var bestDistance = 0.0
        let centreX = Double(width - window.width) / 2, centreY = Double(height - window.height) / 2
        for y in 0...(height - window.height) {
            for x in 0...(width - window.width) {
                let total = sum(x, y)
                let distance = (Double(x) - centreX) * (Double(x) - centreX) + (Double(y) - centreY) * (Double(y) - centreY)
                if total > bestSum * (1 + 1e-9) + 1e-9 || (abs(total - bestSum) <= 1e-9 * max(1, bestSum) && distance < bestDistance) {
                    best = (x, y)
                    bestSum = total
                    bestDistance = distance
                }
            }
        }
        return best == centred ? nil : best
    }
}
