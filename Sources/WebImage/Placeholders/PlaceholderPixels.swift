/// The small image every placeholder is computed from: the first frame, upright, scaled down
/// (area average, premultiplied: ``Resampler``) to fit 100×100 — ThumbHash's own limit, and more
/// than BlurHash's few components can tell apart — as tightly packed straight-alpha RGBA.
///
/// Encoders never read a full-size image: a 20 MP photo costs them 10,000 pixels.
struct PlaceholderPixels: Sendable {
    /// The longest side the encoders read.
    static let maxSide = 100

    let width: Int
    let height: Int
    /// `width × height × 4` bytes, row by row, straight alpha.
    let rgba: [UInt8]

    /// The placeholder source of `image` (its first frame, turned upright, scaled to fit 100×100
    /// when larger; never enlarged).
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)``.
    init(image: Image) throws(ImageCodingError) {
        var still = image.isAnimated ? image.replacingFrames(first: image, later: []) : image
        still = try still.oriented()
        if max(still.width, still.height) > Self.maxSide {
            still = try Resampler.resample(still, to: PNGCoder.size(of: still.size, fittingSide: Self.maxSide))
        }
        let packed = try still.converted(to: .rgba8)
        width = packed.width
        height = packed.height
        rgba = [UInt8](packed.pixels)
    }

    /// Pixels given as they are (tests, tools): `rgba` holds `width × height × 4` straight-alpha bytes.
    init(width: Int, height: Int, rgba: [UInt8]) {
        precondition(width > 0 && height > 0 && rgba.count == width * height * 4)
        self.width = width
        self.height = height
        self.rgba = rgba
    }

    /// RGB bytes (3 per pixel) of the pixels composited over `background`:
    /// `(c·a + b·(255 − a) + 127) / 255` per channel, so opaque pixels keep their exact values.
    func flattened(over background: PixelColor) -> [UInt8] {
        var rgb = [UInt8](repeating: 0, count: width * height * 3)
        let back = [background.red, background.green, background.blue]
        for pixel in 0..<(width * height) {
            for channel in 0..<3 {
                rgb[pixel * 3 + channel] = Image.composite(rgba[pixel * 4 + channel], alpha: rgba[pixel * 4 + 3], over: back[channel])
            }
        }
        return rgb
    }

}

extension Image {
    /// The small copy placeholders (``BlurHash``, ``ThumbHash``) and colours are computed from:
    /// the first frame, upright, scaled down (area average) to fit 100×100, never enlarged.
    ///
    /// - Parameter background: `nil` (the default) for ``PixelFormat/rgba8`` with straight alpha,
    ///   as ThumbHash reads it; a colour for ``PixelFormat/rgb8`` composited over it, as BlurHash
    ///   reads it (``BlurHash/init(encoding:xComponents:yComponents:background:)`` uses white).
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)``.
    public func placeholderSource(background: PixelColor? = nil) throws(ImageCodingError) -> Image {
        let pixels = try PlaceholderPixels(image: self)
        guard let background else { return try Image(width: pixels.width, height: pixels.height, pixelFormat: .rgba8, pixels: pixels.rgba) }
        return try Image(width: pixels.width, height: pixels.height, pixelFormat: .rgb8, pixels: pixels.flattened(over: background))
    }
}
