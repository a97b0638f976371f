/// Resizes an image to a size in pixels (SDWebImage's `SDImageResizingTransformer`, Nuke's `Resize`).
///
/// Shrinking averages every source pixel over the area it covers (no aliasing, even from 20 MP to
/// 256 px); enlarging interpolates bilinearly. Images with alpha are filtered premultiplied, so
/// transparent pixels leave no dark fringe. The pixel format is kept.
public struct ResizingTransformer: ImageTransformer, Hashable {
    /// How the image's aspect ratio is treated.
    public enum ScaleMode: String, Sendable, Hashable, CaseIterable {
        /// Stretch to exactly ``ResizingTransformer/size``; the aspect ratio may change.
        case fill
        /// Keep the aspect ratio and fit inside ``ResizingTransformer/size``: the result is as large
        /// as fits, so one side may be shorter (no padding is added, unlike SDWebImage, which pads
        /// with transparency).
        case aspectFit
        /// Keep the aspect ratio and cover ``ResizingTransformer/size``, cropping the overflow
        /// evenly from both sides: the result is exactly the size.
        case aspectFill
    }

    /// The target size in pixels.
    public let size: PixelSize
    /// How the aspect ratio is treated.
    public let scaleMode: ScaleMode

    /// Creates a transformer that resizes to `size` pixels.
    /// - Parameters:
    ///   - size: the target size; both sides must be positive (``transform(_:forKey:)`` throws otherwise).
    ///   - scaleMode: how the aspect ratio is treated; default ``ScaleMode/fill`` (stretch), as SDWebImage.
    public init(size: PixelSize, scaleMode: ScaleMode = .fill) {
        self.size = size
        self.scaleMode = scaleMode
    }

    /// `ResizingTransformer(WIDTHxHEIGHT,MODE)`, such as `ResizingTransformer(256x256,aspectFill)`.
    public var key: String { "ResizingTransformer(\(size.width)x\(size.height),\(scaleMode.rawValue))" }

    /// `true`: the resampler filters 16-bit samples at 16 bits.
    public var acceptsHighBitDepth: Bool { true }

    /// Returns the resized image (every frame of an animated one).
    /// - Throws: ``ImageTransformError/invalidParameter(_:)`` when ``size`` is not positive;
    ///   ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        guard size.width > 0, size.height > 0 else {
            throw ImageTransformError.invalidParameter("a resize needs a positive size, not \(size)")
        }
        return try image.transformingFrames { frame in
            let (region, target) = plan(for: frame.size)
            do throws(ImageCodingError) {
                return try Resampler.resample(frame, region: region, to: target)
            } catch {
                throw TransformSupport.transformError(error)
            }
        }
    }

    /// The size the resize makes (empty when ``size`` is not positive: it throws then).
    public func plannedSizes(for source: PixelSize) -> [PixelSize] {
        guard size.width > 0, size.height > 0, source.width > 0, source.height > 0 else { return [] }
        return [plan(for: source).size]
    }

    /// The part of a `source`-sized image that is used and the size it becomes.
    func plan(for source: PixelSize) -> (region: PixelRect, size: PixelSize) {
        let whole = PixelRect(x: 0, y: 0, width: source.width, height: source.height)
        let widthRatio = Double(size.width) / Double(source.width)
        let heightRatio = Double(size.height) / Double(source.height)
        switch scaleMode {
        case .fill:
            return (whole, size)
        case .aspectFit:
            let ratio = min(widthRatio, heightRatio)
            let fitted = PixelSize(width: Self.scaled(source.width, by: ratio, limit: size.width),
                                   height: Self.scaled(source.height, by: ratio, limit: size.height))
            return (whole, fitted)
        case .aspectFill:
            let ratio = max(widthRatio, heightRatio)
            let usedWidth = min(source.width, max(1, Int((Double(size.width) / ratio).rounded())))
            let usedHeight = min(source.height, max(1, Int((Double(size.height) / ratio).rounded())))
            let region = PixelRect(x: (source.width - usedWidth) / 2, y: (source.height - usedHeight) / 2,
                                   width: usedWidth, height: usedHeight)
            return (region, size)
        }
    }

    /// `length × ratio` rounded, at least 1 and at most `limit`.
    private static func scaled(_ length: Int, by ratio: Double, limit: Int) -> Int {
        min(limit, max(1, Int((Double(length) * ratio).rounded())))
    }
}
