import CPixels

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
    public final class Reference: @unchecked Sendable {
        /// `@unchecked Sendable`: the prepared planes are written once in `init` and only read after.
        private let prepared: OpaquePointer
        /// The size candidates are compared at (the picture's own, or the downscaled one).
        public let comparedSize: PixelSize
        /// The reference's own size; candidates must have it.
        public let size: PixelSize

        /// Prepares `image` (its first frame; any pixel format, 16-bit narrowed).
        /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` when the planes cannot be allocated,
        ///   or a conversion's error.
        public init(_ image: Image) throws(ImageCodingError) {
            size = image.size
            comparedSize = DSSIM.comparedSize(for: image.size)
            prepared = try DSSIM.prepare(image, at: comparedSize)
        }

        deinit {
            wi_dssim_free(prepared)
        }

        /// The DSSIM of `candidate` against this reference: 0 when they look identical.
        /// - Throws: ``ImageCodingError/invalidImage(_:)`` when `candidate`'s size differs from the
        ///   reference's; ``ImageCodingError/insufficientMemory(byteCount:)``.
        public func difference(to candidate: Image) throws(ImageCodingError) -> Double {
            guard candidate.size == size else {
                throw .invalidImage("DSSIM compares pictures of one size: \(candidate.width)×\(candidate.height) against \(size.width)×\(size.height)")
            }
            let other = try DSSIM.prepare(candidate, at: comparedSize)
            defer { wi_dssim_free(other) }
            let value = wi_dssim_compare(prepared, other)
            guard value >= 0 else { throw .insufficientMemory(byteCount: comparedSize.width * comparedSize.height * 16) }
            return value
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

    /// `image`'s first frame as straight 8-bit RGBA at `size`, prepared by the C side.
    private static func prepare(_ image: Image, at size: PixelSize) throws(ImageCodingError) -> OpaquePointer {
        let rgba = try comparedPixels(image, at: size)
        let prepared = rgba.withUnsafePixels { bytes in
            wi_dssim_prepare(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), rgba.width, rgba.height, rgba.bytesPerRow)
        }
        guard let prepared else { throw .insufficientMemory(byteCount: rgba.width * rgba.height * 48) }
        return prepared
    }

    /// `image`'s first frame as straight 8-bit RGBA at `size` (area-averaged when smaller): what a
    /// perceptual metric compares (``DSSIM``, ``SSIMULACRA2``).
    static func comparedPixels(_ image: Image, at size: PixelSize) throws(ImageCodingError) -> Image {
        var picture = try image.frames[0].image.reducedToEightBits()
        if picture.size != size { picture = try Resampler.resample(picture, to: size) }
        return try picture.converted(to: .rgba8)
    }
}
