import Foundation

/// How a perceptual difference falls as the quality rises, on average, for one format:
/// ln(difference) ≈ `intercept` − `slope` × quality, the difference being the ``DSSIM`` or 100 minus
/// the ``SSIMULACRA2`` score. The quality search starts where the curve meets its target and, while
/// it has tries on one side of the target only, steps by the curve's slope: a picture off the average
/// costs a try or two more, never more than the bisection's bound.
///
/// Fitted by least squares on the 21 pictures of `Benchmarks/autoquality/pictures.tsv` (photographs,
/// film grain, illustrations, screenshots) resized to fit 640 pixels, at each format's default effort:
/// every quality from 30 to 95 for JPEG, WebP and AVIF, every fifth for HEIC and JPEG XL (`bench
/// autoquality-curves`, `AQ_STEP=5`). Starting
/// from it instead of from the picture's complexity took 3.4 tries on average instead of 4.8 for WebP
/// at SSIMULACRA2 62.5, and 2.9 instead of 5.0 for AVIF at 67.5, each picture's start fitted without it.
struct QualityCurve: Sendable, Hashable {
    /// ln(difference) at quality 0.
    let intercept: Double
    /// How much ln(difference) falls per quality point; positive.
    let slope: Double

    /// The quality (unrounded) where the curve meets `target`; `nil` for a target of 0 or less, which
    /// no quality meets.
    func quality(meeting target: Double) -> Double? {
        guard target > 0 else { return nil }
        return (intercept - log(target)) / slope
    }

    /// The quality change (unrounded; positive: up) from a try whose difference was `difference` to
    /// where the curve's slope says `target` is; `nil` when either is 0 or less.
    func step(from difference: Double, to target: Double) -> Double? {
        guard difference > 0, target > 0 else { return nil }
        return log(difference / target) / slope
    }

    /// The DSSIM curve of `format` (JPEG's for a format without a fit of its own).
    static func dssim(for format: ImageFormat) -> QualityCurve {
        switch format {
        case .webp: QualityCurve(intercept: -4.1143, slope: 0.035333)
        case .avif: QualityCurve(intercept: -2.8251, slope: 0.058659)
        case .heic: QualityCurve(intercept: -3.8799, slope: 0.066048)
        case .jxl: QualityCurve(intercept: -3.5228, slope: 0.046384)
        default: QualityCurve(intercept: -3.6314, slope: 0.043487)
        }
    }

    /// The SSIMULACRA2 curve of `format` (100 minus the score; JPEG's for a format without a fit of
    /// its own).
    static func ssimulacra2(for format: ImageFormat) -> QualityCurve {
        switch format {
        case .webp: QualityCurve(intercept: 4.3606, slope: 0.016610)
        case .avif: QualityCurve(intercept: 4.9834, slope: 0.027483)
        case .heic: QualityCurve(intercept: 4.3339, slope: 0.026675)
        case .jxl: QualityCurve(intercept: 4.5939, slope: 0.021605)
        default: QualityCurve(intercept: 4.6126, slope: 0.020825)
        }
    }
}
