/// Cuts a rectangle out of an image (SDWebImage's `SDImageCroppingTransformer`).
///
/// The rectangle is clipped to the image; pixels are copied exactly and the pixel format is kept.
public struct CroppingTransformer: ImageTransformer, Hashable {
    /// The rectangle to keep, in pixels of the upright image.
    public let rect: PixelRect

    /// Creates a transformer that keeps the pixels inside `rect` (clipped to the image).
    public init(rect: PixelRect) {
        self.rect = rect
    }

    /// `CroppingTransformer(X,Y,WIDTHxHEIGHT)`, such as `CroppingTransformer(10,20,100x50)`.
    public var key: String { "CroppingTransformer(\(rect))" }

    /// The part of the rectangle inside the image (empty when none is: it throws then).
    public func plannedSizes(for source: PixelSize) -> [PixelSize] {
        let kept = rect.intersection(PixelRect(x: 0, y: 0, width: source.width, height: source.height))
        return kept.isEmpty ? [] : [kept.size]
    }

    /// `true`: a crop copies whole pixels of any depth.
    public var acceptsHighBitDepth: Bool { true }

    /// Returns the cropped image (every frame of an animated one).
    /// - Throws: ``ImageTransformError/emptyResult(_:)`` when the rectangle and the image do not
    ///   overlap; ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        try image.transformingFrames { frame in
            let kept = rect.intersection(PixelRect(x: 0, y: 0, width: frame.width, height: frame.height))
            guard !kept.isEmpty else {
                throw ImageTransformError.emptyResult("the crop rectangle \(rect) lies outside the \(frame.size) image")
            }
            if kept.size == frame.size && frame.bytesPerRow == frame.width * frame.pixelFormat.bytesPerPixel { return frame }
            let bpp = frame.pixelFormat.bytesPerPixel
            let rowBytes = kept.width * bpp
            let storage = try TransformSupport.allocate(width: kept.width, height: kept.height, format: frame.pixelFormat)
            for y in 0..<kept.height {
                frame.withUnsafeRow(kept.y + y) { row in
                    (storage.bytes + y * rowBytes).copyMemory(from: row.baseAddress! + kept.x * bpp, byteCount: rowBytes)
                }
            }
            return frame.derived(storage: storage, width: kept.width, height: kept.height, pixelFormat: frame.pixelFormat)
        }
    }
}
