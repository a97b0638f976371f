import CPixels

/// The C side of a perceptual metric (``DSSIM``, ``SSIMULACRA2``): how a picture is prepared, how a
/// candidate's pixels are compared with a prepared picture, and how one is freed. Both metrics share
/// one shape, prepare once and compare many, held by ``PreparedPicture``.
struct PerceptualMetric: Sendable {
    /// The metric's name, for error messages.
    let name: String
    /// The smallest side it compares (SSIMULACRA2's blur needs 8 pixels).
    let minimumSide: Int
    /// About what a prepared pixel holds, in bytes, for ``ImageCodingError/insufficientMemory(byteCount:)``.
    let preparedBytesPerPixel: Int
    /// Prepares straight 8-bit RGBA pixels (base, width, height, bytes per row); `nil` when memory runs out.
    let prepare: @Sendable (UnsafePointer<UInt8>?, Int, Int, Int) -> OpaquePointer?
    /// The value of straight 8-bit RGBA pixels (base, width, height, bytes per row) against a prepared
    /// picture of their size; `nil` when memory runs out. The C side prepares the candidate in buffers
    /// the prepared picture keeps for the next one, and is safe to call from several threads at once.
    let compare: @Sendable (OpaquePointer, UnsafePointer<UInt8>?, Int, Int, Int) -> Double?
    /// Frees a prepared picture.
    let free: @Sendable (OpaquePointer) -> Void

    /// DSSIM's C functions (`dssim.h`): a negative value means memory ran out.
    static let dssim = PerceptualMetric(
        name: "DSSIM", minimumSide: 1, preparedBytesPerPixel: 48,
        prepare: { wi_dssim_prepare($0, $1, $2, $3) },
        compare: { original, pixels, width, height, bytesPerRow in
            let value = wi_dssim_compare_pixels(original, pixels, width, height, bytesPerRow)
            return value >= 0 ? value : nil
        },
        free: { wi_dssim_free($0) })

    /// SSIMULACRA2's C functions (`ssimulacra2.h`): NaN means memory ran out.
    static let ssimulacra2 = PerceptualMetric(
        name: "SSIMULACRA2", minimumSide: 8, preparedBytesPerPixel: 40,
        prepare: { wi_ssimulacra2_prepare($0, $1, $2, $3, 4) },
        compare: { original, pixels, width, height, bytesPerRow in
            let value = wi_ssimulacra2_score_pixels(original, pixels, width, height, bytesPerRow, 4)
            return value.isNaN ? nil : value
        },
        free: { wi_ssimulacra2_free($0) })
}

/// A picture made ready once by a ``PerceptualMetric``, to compare any number of candidates of its
/// size against (the encodes of a quality search). The C side keeps one candidate's buffers in it
/// between comparisons. Pictures larger than ``DSSIM/maxComparedPixels``
/// are compared downscaled to fit, both alike.
///
/// `@unchecked Sendable`: the prepared planes are written once in `init` and only read after, by the
/// metric's C comparison; the one thing it changes, the candidate buffers it keeps, it takes and
/// gives back with atomic exchanges (`wi_spare_take`, `wi_spare_return` in `perceptual_common.h`).
final class PreparedPicture: @unchecked Sendable {
    private let metric: PerceptualMetric
    private let prepared: OpaquePointer
    /// The size candidates are compared at (the picture's own, or the downscaled one).
    let comparedSize: PixelSize
    /// The picture's own size; candidates must have it.
    let size: PixelSize

    /// Prepares `image` (its first frame; any pixel format, 16-bit narrowed).
    /// - Throws: ``ImageCodingError/invalidImage(_:)`` under the metric's smallest side,
    ///   ``ImageCodingError/insufficientMemory(byteCount:)``, or a conversion's error.
    init(_ image: Image, for metric: PerceptualMetric) throws(ImageCodingError) {
        self.metric = metric
        size = image.size
        comparedSize = DSSIM.comparedSize(for: image.size)
        prepared = try Self.prepare(image, at: comparedSize, for: metric)
    }

    deinit {
        metric.free(prepared)
    }

    /// The metric's value of `candidate` against this picture.
    /// - Throws: ``ImageCodingError/invalidImage(_:)`` when `candidate`'s size differs;
    ///   ``ImageCodingError/insufficientMemory(byteCount:)``.
    func compare(_ candidate: Image) throws(ImageCodingError) -> Double {
        guard candidate.size == size else {
            throw .invalidImage("\(metric.name) compares pictures of one size: \(candidate.width)×\(candidate.height) against \(size.width)×\(size.height)")
        }
        let value = try Self.withPixels(of: candidate, at: comparedSize, for: metric) { bytes, width, height, bytesPerRow in
            metric.compare(prepared, bytes, width, height, bytesPerRow)
        }
        guard let value else {
            throw .insufficientMemory(byteCount: comparedSize.width * comparedSize.height * metric.preparedBytesPerPixel)
        }
        return value
    }

    /// `image` prepared by the C side (see ``withPixels(of:at:for:_:)``).
    private static func prepare(_ image: Image, at size: PixelSize, for metric: PerceptualMetric) throws(ImageCodingError) -> OpaquePointer {
        let prepared = try withPixels(of: image, at: size, for: metric) { bytes, width, height, bytesPerRow in
            metric.prepare(bytes, width, height, bytesPerRow)
        }
        guard let prepared else { throw .insufficientMemory(byteCount: size.width * size.height * metric.preparedBytesPerPixel) }
        return prepared
    }

    /// Runs `body` on `image`'s first frame as straight 8-bit RGBA at `size` (area-averaged when
    /// smaller): base, width, height, bytes per row.
    private static func withPixels<Result>(of image: Image, at size: PixelSize, for metric: PerceptualMetric,
                                           _ body: (UnsafePointer<UInt8>?, Int, Int, Int) -> Result) throws(ImageCodingError) -> Result {
        guard size.width >= metric.minimumSide, size.height >= metric.minimumSide else {
            throw .invalidImage("\(metric.name) needs at least \(metric.minimumSide)×\(metric.minimumSide) pixels, got \(size.width)×\(size.height)")
        }
        var picture = try image.frames[0].image.reducedToEightBits()
        if picture.size != size { picture = try Resampler.resample(picture, to: size) }
        let rgba = try picture.converted(to: .rgba8)
        return rgba.withUnsafePixels { bytes in
            body(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), rgba.width, rgba.height, rgba.bytesPerRow)
        }
    }
}
