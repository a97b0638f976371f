/// SSIMULACRA2, the perceptual score of Jon Sneyers (Cloudinary; the tool in libjxl), written here in
/// C from its definition (`ssimulacra2.h`): **100 for identical pictures**, 90 visually lossless, 70
/// high quality, 50 medium, 30 low. Where ``DSSIM`` weighs the coarse scales most, SSIMULACRA2 also
/// counts fine detail lost and ringing added, in JPEG XL's XYB colour space; the automatic quality
/// search can aim at it (``AutomaticQuality/Method/ssimulacra2(score:allowedError:)``, WebImage's own
/// extension of imgproxy's methods).
///
/// It agrees with the Python port on PyPI (`ssimulacra2` 0.3, the scorer of
/// `Benchmarks/autoquality/run.py`) to within 0.02 on real pictures. Alpha is ignored, as that port
/// ignores it. Pictures larger than ``DSSIM/maxComparedPixels`` are compared downscaled, as ``DSSIM``.
public struct SSIMULACRA2: Sendable {
    /// An original made ready once, to score any number of candidates against. From its first score on
    /// it also keeps one candidate's buffers for the next, about as much memory again: hold it while
    /// scoring, not longer. Any thread may use it, several at once.
    public final class Reference: Sendable {
        private let picture: PreparedPicture
        /// The size candidates are compared at (the picture's own, or the downscaled one).
        public var comparedSize: PixelSize { picture.comparedSize }
        /// The original's own size; candidates must have it.
        public var size: PixelSize { picture.size }

        /// Prepares `image` (its first frame; any pixel format, 16-bit narrowed).
        /// - Throws: ``ImageCodingError/invalidImage(_:)`` for a picture under 8×8 pixels,
        ///   ``ImageCodingError/insufficientMemory(byteCount:)``, or a conversion's error.
        public init(_ image: Image) throws(ImageCodingError) {
            picture = try PreparedPicture(image, for: .ssimulacra2)
        }

        /// The score of `candidate` against this original: 100 when identical.
        /// - Throws: ``ImageCodingError/invalidImage(_:)`` when `candidate`'s size differs from the
        ///   original's; ``ImageCodingError/insufficientMemory(byteCount:)``.
        public func score(of candidate: Image) throws(ImageCodingError) -> Double {
            try picture.compare(candidate)
        }
    }

    /// The score of `candidate` against `original` (see the type); for several candidates, prepare
    /// the original once with ``Reference``.
    /// - Throws: as ``Reference/score(of:)``.
    public static func score(of candidate: Image, against original: Image) throws(ImageCodingError) -> Double {
        try Reference(original).score(of: candidate)
    }
}
