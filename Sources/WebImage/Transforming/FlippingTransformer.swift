/// Mirrors an image left to right, top to bottom, or both (SDWebImage's `SDImageFlippingTransformer`).
///
/// Lossless: pixels are moved, never resampled; the size and pixel format are kept.
public struct FlippingTransformer: ImageTransformer, Hashable {
    /// Whether left and right swap.
    public let horizontal: Bool
    /// Whether top and bottom swap.
    public let vertical: Bool

    /// Creates a transformer that mirrors the image.
    /// - Parameters:
    ///   - horizontal: swap left and right; default `false`.
    ///   - vertical: swap top and bottom; default `false`.
    public init(horizontal: Bool = false, vertical: Bool = false) {
        self.horizontal = horizontal
        self.vertical = vertical
    }

    /// `FlippingTransformer(H,V)` with 1 or 0 for each, such as `FlippingTransformer(1,0)`.
    public var key: String { "FlippingTransformer(\(horizontal ? 1 : 0),\(vertical ? 1 : 0))" }

    /// The same size as the source: the pixels change, not the canvas.
    public func plannedSizes(for source: PixelSize) -> [PixelSize] { [source] }

    /// `true`: a flip moves whole pixels of any depth.
    public var acceptsHighBitDepth: Bool { true }

    /// Returns the mirrored image (every frame of an animated one); the image itself when neither
    /// direction is set.
    /// - Throws: ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        try image.transformingFrames { frame in
            switch (horizontal, vertical) {
            case (false, false): frame
            case (true, false): try frame.moved(as: .upMirrored)
            case (false, true): try frame.moved(as: .downMirrored)
            case (true, true): try frame.moved(as: .down)
            }
        }
    }
}
