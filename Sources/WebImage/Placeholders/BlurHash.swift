import Foundation

/// A BlurHash (woltapp/blurhash): a short base-83 string of an image's low frequencies that a page
/// draws as a blurred placeholder while the image loads.
///
/// Encoding follows woltapp's C encoder operation for operation (single-precision sums, its sRGB
/// curves, its quantisation), so the same pixels give the same string; see `scripts/placeholder-check.py`.
/// BlurHash has no alpha: transparent pixels are composited over a background first.
public struct BlurHash: Sendable, Hashable, CustomStringConvertible {
    /// The hash, 6 to 166 characters (`4 + 2·x·y`).
    public let string: String
    /// Components along the width, 1–9.
    public let xComponents: Int
    /// Components along the height, 1–9.
    public let yComponents: Int

    /// The largest image ``image(width:height:punch:)`` draws: 4096×4096 pixels.
    public static let maxDecodedPixelCount = 4096 * 4096

    /// The BlurHash of `image`: its first frame, upright, scaled down to fit 100×100 (never from
    /// the full-size pixels), composited over `background`.
    ///
    /// - Parameters:
    ///   - image: any image; an animation's first frame is used.
    ///   - xComponents: components along the width, 1–9; default 4.
    ///   - yComponents: components along the height, 1–9; default 3.
    ///   - background: what transparent pixels are composited over; default white.
    /// - Throws: ``PlaceholderError/invalidComponentCount(x:y:)``; ``ImageCodingError`` when the
    ///   small copy cannot be allocated.
    public init(encoding image: Image, xComponents: Int = 4, yComponents: Int = 3, background: PixelColor = .white) throws {
        try self.init(pixels: PlaceholderPixels(image: image), xComponents: xComponents, yComponents: yComponents, background: background)
    }

    /// The BlurHash of pixels already small (the manager's image facts share one ``PlaceholderPixels``).
    init(pixels: PlaceholderPixels, xComponents: Int = 4, yComponents: Int = 3, background: PixelColor = .white) throws(PlaceholderError) {
        let rgb = pixels.flattened(over: background)
        try self.init(rgb: rgb, width: pixels.width, height: pixels.height, xComponents: xComponents, yComponents: yComponents)
    }

    /// The BlurHash of `rgb` (3 bytes per pixel, tightly packed) as given, with no scaling.
    init(rgb: [UInt8], width: Int, height: Int, xComponents: Int, yComponents: Int) throws(PlaceholderError) {
        guard (1...9).contains(xComponents), (1...9).contains(yComponents) else {
            throw .invalidComponentCount(x: xComponents, y: yComponents)
        }
        precondition(width > 0 && height > 0 && rgb.count >= width * height * 3)
        string = Self.encode(rgb: rgb, width: width, height: height, xComponents: xComponents, yComponents: yComponents)
        self.xComponents = xComponents
        self.yComponents = yComponents
    }

    /// Reads a BlurHash string.
    /// - Throws: ``PlaceholderError/invalidHash(reason:)`` when it is not one: shorter than 6
    ///   characters, a character outside the alphabet, or a length that disagrees with its size flag.
    public init(string: String) throws(PlaceholderError) {
        let bytes = Array(string.utf8)
        guard bytes.count >= 6 else { throw .invalidHash(reason: "a BlurHash has at least 6 characters, not \(bytes.count)") }
        guard bytes.allSatisfy({ Base83.values[Int($0)] >= 0 }), let flag = Base83.decode(bytes[0..<1]) else {
            throw .invalidHash(reason: "a character is not a BlurHash digit")
        }
        let x = flag % 9 + 1, y = flag / 9 + 1
        guard bytes.count == 4 + 2 * x * y else {
            throw .invalidHash(reason: "a \(x)x\(y) BlurHash has \(4 + 2 * x * y) characters, not \(bytes.count)")
        }
        self.string = string
        xComponents = x
        yComponents = y
    }

    /// The hash string itself.
    public var description: String { string }

    /// The colour of the DC component: the image's mean colour (in linear light), as an opaque colour.
    public var averageColor: PixelColor {
        let value = Base83.decode(Array(string.utf8)[2..<6]) ?? 0
        return PixelColor(red: UInt8(clamping: value >> 16), green: UInt8(clamping: (value >> 8) & 255), blue: UInt8(clamping: value & 255))
    }

    /// Draws the placeholder as woltapp's C decoder does: an opaque ``PixelFormat/rgb8`` image.
    ///
    /// - Parameters:
    ///   - width: the width in pixels (a page draws it small, 32 or so, and lets the browser stretch it).
    ///   - height: the height in pixels.
    ///   - punch: contrast of the varying components, at least 1; default 1.
    /// - Throws: ``PlaceholderError/invalidSize(width:height:)`` when a side is not positive or the
    ///   image would exceed ``maxDecodedPixelCount``; ``ImageCodingError`` when it cannot be allocated.
    public func image(width: Int, height: Int, punch: Float = 1) throws -> Image {
        guard width > 0, height > 0, width <= Self.maxDecodedPixelCount / height else {
            throw PlaceholderError.invalidSize(width: width, height: height)
        }
        let bytes = Array(string.utf8)
        let quantisedMaximum = Base83.decode(bytes[1..<2]) ?? 0
        let maximum = Float(quantisedMaximum + 1) / 166 * max(punch, 1)
        var colors = [Float](repeating: 0, count: xComponents * yComponents * 3)
        let dc = Base83.decode(bytes[2..<6]) ?? 0
        (colors[0], colors[1], colors[2]) = (Self.linear(dc >> 16), Self.linear((dc >> 8) & 255), Self.linear(dc & 255))
        for index in 1..<(xComponents * yComponents) {
            let value = Base83.decode(bytes[(4 + index * 2)..<(6 + index * 2)]) ?? 0
            let quantised = [value / (19 * 19), (value / 19) % 19, value % 19]
            for channel in 0..<3 {
                colors[index * 3 + channel] = Self.signedPower((Float(quantised[channel]) - 9) / 9, 2) * maximum
            }
        }
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        let cosX = (0..<(width * xComponents)).map { Double.pi * Double($0 / xComponents) * Double($0 % xComponents) / Double(width) }
            .map { cos($0) }
        let cosY = (0..<(height * yComponents)).map { Double.pi * Double($0 / yComponents) * Double($0 % yComponents) / Double(height) }
            .map { cos($0) }
        for y in 0..<height {
            for x in 0..<width {
                var (r, g, b): (Float, Float, Float) = (0, 0, 0)
                for j in 0..<yComponents {
                    for i in 0..<xComponents {
                        let basis = Float(cosX[x * xComponents + i] * cosY[y * yComponents + j])
                        let index = (i + j * xComponents) * 3
                        r += colors[index] * basis
                        g += colors[index + 1] * basis
                        b += colors[index + 2] * basis
                    }
                }
                let pixel = (y * width + x) * 3
                rgb[pixel] = UInt8(clamping: Self.sRGB(r))
                rgb[pixel + 1] = UInt8(clamping: Self.sRGB(g))
                rgb[pixel + 2] = UInt8(clamping: Self.sRGB(b))
            }
        }
        return try Image(width: width, height: height, pixelFormat: .rgb8, pixels: rgb)
    }

    // MARK: The reference's arithmetic

    /// woltapp's `blurHashForPixels`: per component, a single-precision sum over the pixels in row
    /// order of `cosf(π·i·x/w)·cosf(π·j·y/h)` times the pixel's linear value. One pass over the
    /// pixels keeps every component's own sum in the reference's order.
    static func encode(rgb: [UInt8], width: Int, height: Int, xComponents: Int, yComponents: Int) -> String {
        let componentCount = xComponents * yComponents
        let cosX = (0..<(width * xComponents)).map { cosf(Float(Double.pi * Double($0 % xComponents) * Double($0 / xComponents) / Double(width))) }
        let cosY = (0..<(height * yComponents)).map { cosf(Float(Double.pi * Double($0 % yComponents) * Double($0 / yComponents) / Double(height))) }
        var sums = [Float](repeating: 0, count: componentCount * 3)
        sums.withUnsafeMutableBufferPointer { sums in
            linearTable.withUnsafeBufferPointer { linear in
                for y in 0..<height {
                    for x in 0..<width {
                        let pixel = (y * width + x) * 3
                        let (r, g, b) = (linear[Int(rgb[pixel])], linear[Int(rgb[pixel + 1])], linear[Int(rgb[pixel + 2])])
                        for j in 0..<yComponents {
                            let fy = cosY[y * yComponents + j]
                            for i in 0..<xComponents {
                                let basis = cosX[x * xComponents + i] * fy
                                let index = (j * xComponents + i) * 3
                                sums[index] += basis * r
                                sums[index + 1] += basis * g
                                sums[index + 2] += basis * b
                            }
                        }
                    }
                }
            }
        }
        let area = Float(width * height)
        var factors = sums
        for index in 0..<componentCount {
            let scale = (index == 0 ? Float(1) : Float(2)) / area
            for channel in 0..<3 { factors[index * 3 + channel] = sums[index * 3 + channel] * scale }
        }
        var text: [UInt8] = []
        text.reserveCapacity(4 + 2 * componentCount)
        Base83.append((xComponents - 1) + (yComponents - 1) * 9, length: 1, to: &text)
        var maximum: Float = 1
        if componentCount > 1 {
            var actual: Float = 0
            for value in factors[3...] { actual = fmaxf(fabsf(value), actual) }
            let quantised = Int(fmaxf(0, fminf(82, floorf(Float(Double(actual * 166) - 0.5)))))
            maximum = (Float(quantised) + 1) / 166
            Base83.append(quantised, length: 1, to: &text)
        } else {
            Base83.append(0, length: 1, to: &text)
        }
        Base83.append((sRGB(factors[0]) << 16) + (sRGB(factors[1]) << 8) + sRGB(factors[2]), length: 4, to: &text)
        for index in 1..<max(componentCount, 1) {
            var value = 0
            for channel in 0..<3 {
                let scaled = signedPower(factors[index * 3 + channel] / maximum, 0.5) * 9
                value = value * 19 + Int(fmaxf(0, fminf(18, floorf(Float(Double(scaled) + 9.5)))))
            }
            Base83.append(value, length: 2, to: &text)
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// woltapp's `sRGBToLinear` for each byte value.
    static let linearTable: [Float] = (0..<256).map { linear($0) }

    static func linear(_ value: Int) -> Float {
        let v = Float(value) / 255
        return Double(v) <= 0.04045 ? Float(Double(v) / 12.92) : powf(Float((Double(v) + 0.055) / 1.055), Float(2.4))
    }

    /// woltapp's `linearTosRGB`: truncated, as its `int` return does.
    static func sRGB(_ value: Float) -> Int {
        let v = fmaxf(0, fminf(1, value))
        if Double(v) <= 0.0031308 { return Int(Double(v) * 12.92 * 255 + 0.5) }
        return Int((1.055 * Double(powf(v, Float(1 / 2.4))) - 0.055) * 255 + 0.5)
    }

    static func signedPower(_ value: Float, _ exponent: Float) -> Float {
        copysignf(powf(fabsf(value), exponent), value)
    }
}
