import Foundation

/// Blurs an image with a Gaussian of the given radius (SDWebImage's `SDImageBlurTransformer`).
///
/// The Gaussian is approximated by three box blurs, as the CSS and SVG filter specifications
/// define it, so the time per pixel does not grow with the radius. Edges repeat the border pixels;
/// images with alpha are blurred premultiplied. A constant image stays exactly the same constant.
/// The pixel format is kept.
public struct BlurTransformer: ImageTransformer, Hashable {
    /// The Gaussian's standard deviation in pixels (what SDWebImage and `vips gaussblur` call the radius or sigma).
    public let radius: Double

    /// Creates a transformer that blurs by `radius` pixels (the Gaussian's standard deviation);
    /// 0 leaves the image as it is. ``transform(_:forKey:)`` throws for a negative or non-finite radius.
    public init(radius: Double) {
        self.radius = radius
    }

    /// `BlurTransformer(RADIUS)`, such as `BlurTransformer(20.000000)`.
    public var key: String { "BlurTransformer(\(TransformSupport.keyNumber(radius)))" }

    /// The same size as the source: the pixels change, not the canvas.
    public func plannedSizes(for source: PixelSize) -> [PixelSize] { [source] }

    /// Returns the blurred image (every frame of an animated one); the upright image unchanged when
    /// the radius is too small to move any pixel.
    /// - Throws: ``ImageTransformError/invalidParameter(_:)`` for a negative or non-finite radius;
    ///   ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        let image = try TransformSupport.eightBit(image)   // 8-bit samples only
        guard radius.isFinite, radius >= 0 else {
            throw ImageTransformError.invalidParameter("a blur needs a radius of 0 or more, not \(radius)")
        }
        // The box size that three passes need to approximate a Gaussian of this deviation
        // (CSS Filter Effects, feGaussianBlur): d = ⌊σ · 3·√(2π) / 4 + 0.5⌋.
        let box = Int(min(radius * 3 * (2 * Double.pi).squareRoot() / 4 + 0.5, 65_000))
        guard box > 1 else { return try image.transformingFrames { $0 } }
        return try image.transformingFrames { frame in try BoxBlur(boxSize: box).blur(frame) }
    }
}
