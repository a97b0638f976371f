/// DSSIM: how different two pictures look, as Kornel Lesiński's `dssim` tool measures it (written
/// here from its documentation, in C: `dssim.h`). Multi-scale SSIM over L*a*b* planes made from
/// linear-light premultiplied RGBA, chroma compared at lower spatial precision, five scales weighted
/// 0.028, 0.197, 0.322, 0.298 and 0.155, each pooled by its mean absolute deviation; the value is
/// 1/SSIM − 1: **0 for identical pictures**, about 0.001 for a barely visible change, 0.02 (imgproxy's
/// default autoquality target) for a small visible one, unbounded above.
///
/// Pictures larger than ``maxComparedPixels`` are compared downscaled (both alike, by the same
/// area-averaging resampler) to fit: a 12-megapixel photo is compared at about 1 megapixel, so the
/// value measures what shows at that scale (coarser compression artifacts, not single-pixel noise).
public struct DSSIM: Sendable {
    /// The most pixels compared: 1,048,576 (1024×1024). Larger pictures are compared at the largest
    /// size of the same aspect ratio within it.
    public static let maxComparedPixels = 1 << 20

    /// A reference picture made ready once (its colour planes, blurred means and squares at every
    /// scale), to compare any number of candidates against, such as the encodes of a quality search.
    /// From its first comparison on it also keeps one candidate's buffers for the next, about as much
    /// memory again: hold it while comparing, not longer. Any thread may use it, several at once.
    public final class Reference: Sendable {
        private let picture: PreparedPicture
        /// The size candidates are compared at (the picture's own, or the downscaled one).
        public var comparedSize: PixelSize { picture.comparedSize }
        /// The reference's own size; candidates must have it.
        public var size: PixelSize { picture.size }

        /// Prepares `image` (its first frame; any pixel format, 16-bit narrowed).
        /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` when the planes cannot be allocated,
        ///   or a conversion's error.
        public init(_ image: Image) throws(ImageCodingError) {
            picture = try PreparedPicture(image, for: .dssim)
        }

        /// The DSSIM of `candidate` against this reference: 0 when they look identical.
        /// - Throws: ``ImageCodingError/invalidImage(_:)`` when `candidate`'s size differs from the
        ///   reference's; ``ImageCodingError/insufficientMemory(byteCount:)``.
        public func difference(to candidate: Image) throws(ImageCodingError) -> Double {
            try picture.compare(candidate)
        }
    }

    /// The DSSIM of `candidate` against `reference` (see the type); for several candidates against
    /// one reference, prepare it once with ``Reference``.
    /// - Throws: as ``Reference/difference(to:)``.
    public static func difference(between reference: Image, and candidate: Image) throws(ImageCodingError) -> Double {
        try Reference(reference).difference(to: candidate)
    }

    /// The size a picture of `size` is compared at: itself, or the largest of its aspect ratio
    /// within ``maxComparedPixels``.
    public static func comparedSize(for size: PixelSize) -> PixelSize {
        let pixels = size.width * size.height
        guard pixels > maxComparedPixels else { return size }
        let factor = (Double(maxComparedPixels) / Double(pixels)).squareRoot()
        return PixelSize(width: max(1, Int(Double(size.width) * factor)), height: max(1, Int(Double(size.height) * factor)))
    }
}
