/// Washes an image with a colour, keeping its alpha (SDWebImage's `SDImageTintTransformer`, drawn
/// "source atop").
///
/// Each pixel becomes `color × a + pixel × (1 − a)`, where `a` is the colour's alpha: an opaque
/// colour gives a silhouette of the image's shape, a translucent one a tinted image. Gray images
/// stay gray under a gray colour and become colour otherwise; alpha is kept or left absent.
public struct TintTransformer: ImageTransformer, Hashable {
    /// The colour laid over the image; its alpha is the strength of the tint.
    public let color: PixelColor

    /// Creates a transformer that tints with `color` (its alpha sets the strength; opaque replaces
    /// every colour).
    public init(color: PixelColor) {
        self.color = color
    }

    /// `TintTransformer(#RRGGBBAA)`, such as `TintTransformer(#FF000080)`.
    public var key: String { "TintTransformer(\(TransformSupport.hex(color)))" }

    /// The same size as the source: the pixels change, not the canvas.
    public func plannedSizes(for source: PixelSize) -> [PixelSize] { [source] }

    /// Returns the tinted image (every frame of an animated one).
    /// - Throws: ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        let image = try TransformSupport.eightBit(image)   // 8-bit samples only
        let isGray = color.red == color.green && color.green == color.blue
        return try image.transformingFrames { frame in
            let format: PixelFormat = isGray || frame.pixelFormat.isColor
                ? frame.pixelFormat
                : (frame.pixelFormat.hasAlpha ? .rgba8 : .rgb8)
            let strength = UInt32(color.alpha), rest = 255 - UInt32(color.alpha)
            let tint = (UInt32(color.red) * strength, UInt32(color.green) * strength, UInt32(color.blue) * strength)
            return try frame.mappingRGBARows(to: format) { pixels, _ in
                for x in 0..<frame.width {
                    pixels[4 * x] = UInt8((tint.0 + UInt32(pixels[4 * x]) * rest + 127) / 255)
                    pixels[4 * x + 1] = UInt8((tint.1 + UInt32(pixels[4 * x + 1]) * rest + 127) / 255)
                    pixels[4 * x + 2] = UInt8((tint.2 + UInt32(pixels[4 * x + 2]) * rest + 127) / 255)
                }
            }
        }
    }
}
