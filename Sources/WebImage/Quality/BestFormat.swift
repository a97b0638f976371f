import Foundation

/// imgproxy Pro's `format:best`: the picture is encoded in every candidate format that can hold it,
/// and the smallest file is kept. Its ``ImageComplexity`` decides whether lossless encodes compete:
/// below ``complexityThreshold`` (a flat illustration, a screenshot) PNG, lossless WebP and lossless
/// JPEG XL are tried beside the lossy formats, above it only the lossy ones (a lossless photo is
/// never the smallest, and its encode is slow). Ask for it with ``VariantFormat/best(_:)``; the answer depends on the candidates,
/// so a server builds them from the client's `Accept` header (``init(accept:preferred:coders:)``)
/// and keeps one variant per `Accept` class.
public struct BestFormat: Sendable, Hashable {
    /// imgproxy's `IMGPROXY_BEST_FORMAT_COMPLEXITY_THRESHOLD` default, 5.5, on ``ImageComplexity``'s scale.
    public static let defaultComplexityThreshold = 5.5

    /// The formats tried, in order of preference (a tie keeps the earlier).
    public var candidates: [ImageFormat]
    /// Pictures whose complexity is below it are also tried losslessly (PNG, lossless WebP or JPEG
    /// XL); default 5.5; 0: lossy only.
    public var complexityThreshold: Double
    /// Pictures with more pixels than this are encoded once, in the candidate that usually wins
    /// (lossless WebP, JPEG XL, PNG for a flat picture; AVIF, WebP, JPEG XL, JPEG for a busy one), not
    /// in every one (`IMGPROXY_BEST_FORMAT_MAX_RESOLUTION`, in pixels here); default `nil`: no limit.
    public var maxPixelCount: Int?

    /// Candidates given outright.
    public init(candidates: [ImageFormat], complexityThreshold: Double = defaultComplexityThreshold, maxPixelCount: Int? = nil) {
        self.candidates = candidates
        self.complexityThreshold = complexityThreshold
        self.maxPixelCount = maxPixelCount
    }

    /// The candidates for a client that sent `accept`: the `preferred` formats (default JPEG, PNG and
    /// GIF, imgproxy's preferred formats), then the negotiable ones (JPEG XL, AVIF, WebP) the header
    /// lists, each when `coders` (default ``CoderRegistry/shared``) write it.
    public init(accept: String?, preferred: [ImageFormat] = [.jpeg, .png, .gif], coders: CoderRegistry = .shared,
                complexityThreshold: Double = defaultComplexityThreshold, maxPixelCount: Int? = nil) {
        var formats = preferred.filter(coders.canEncode)
        for format in ImageFormatRegistry.shared.negotiableFormats where format.isAccepted(by: accept) && coders.canEncode(format) {
            if !formats.contains(format) { formats.append(format) }
        }
        self.init(candidates: formats, complexityThreshold: complexityThreshold, maxPixelCount: maxPixelCount)
    }

    /// What an encode chose.
    public struct Choice: Sendable, Hashable {
        /// The kept file.
        public var data: Data
        /// Its format.
        public var format: ImageFormat
        /// Whether it was encoded losslessly.
        public var isLossless: Bool
        /// The picture's complexity.
        public var complexity: Double
        /// Formats encoded to choose it.
        public var formatsTried: Int
    }

    /// The formats lossless encodes use, best first, and the ones that only encode losslessly.
    private static let losslessFormats: [ImageFormat] = [.webp, .jxl, .png, .gif]
    /// (GIF, BMP, ICO and TIFF are never lossy here; TIFF's and BMP's files are never the smallest.)
    private static let losslessOnly: Set<ImageFormat> = [.png, .gif, .bmp, .tiff, .ico]
    /// The single pick above ``maxPixelCount``, best first.
    private static let lossyPreference: [ImageFormat] = [.avif, .webp, .jxl, .jpeg, .heic]

    /// Encodes `image` in each candidate that can hold it (see the type) with `options` resolved for
    /// the format (its quality, effort, ``EncodeOptions/automaticQuality``), and returns the smallest;
    /// when no candidate can hold it, the source's family (``ImageFormat/family(ofAnimated:hasAlpha:)``).
    /// - Throws: the first encode's error when every encode fails.
    public func encode(_ image: Image, options: EncodeOptions, coders: CoderRegistry) throws -> Choice {
        let animated = image.isAnimated && !options.firstFrameOnly
        let alpha = image.pixelFormat.hasAlpha
        var holding = candidates.filter { coders.canEncode($0) && $0.canHold(animated: animated, alpha: alpha) }
        if !animated, holding.contains(where: { $0 != .gif }) { holding.removeAll { $0 == .gif } }   // a still is never better as GIF
        if holding.isEmpty { holding = [.family(ofAnimated: animated, hasAlpha: alpha)] }
        let complexity = complexityThreshold > 0 ? try ImageComplexity.measure(image) : .infinity
        let flat = complexity < complexityThreshold
        // (format, lossless) pairs: the lossy encodes, then (for a flat picture) the lossless ones.
        var tries: [(format: ImageFormat, lossless: Bool)] = holding.filter { !Self.losslessOnly.contains($0) }.map { ($0, false) }
        if flat || tries.isEmpty { tries += Self.losslessFormats.filter(holding.contains).map { ($0, true) } }
        if tries.isEmpty { tries = holding.map { ($0, Self.losslessOnly.contains($0)) } }
        if let limit = maxPixelCount, limit > 0, image.width * image.height > limit {
            let pick = flat ? Self.losslessFormats.first { format in tries.contains { $0 == (format, true) } }.map { ($0, true) }
                : Self.lossyPreference.first { format in tries.contains { $0 == (format, false) } }.map { ($0, false) }
            tries = [pick ?? tries[0]]
        }
        var best: Choice?
        var firstError: (any Error)?
        for (format, lossless) in tries {
            var resolved = options.resolved(for: format)
            if lossless { resolved.isLossless = true }
            do {
                let data = try coders.encode(image, as: format, options: resolved)
                if best.map({ data.count < $0.data.count }) ?? true {
                    best = Choice(data: data, format: format, isLossless: lossless, complexity: complexity, formatsTried: 0)
                }
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        guard var chosen = best else {
            throw firstError ?? ImageCodingError.unsupportedEncoding(format: tries[0].format, pixelFormat: image.pixelFormat)
        }
        chosen.formatsTried = tries.count
        return chosen
    }

    /// The part of a variant's key that names it: the candidates and the settings.
    var keyPart: String {
        var part = "best-" + candidates.map(\.rawValue).joined(separator: ".") + "-t\(Int((complexityThreshold * 1000).rounded()))"
        if let pixels = maxPixelCount { part += "-px\(pixels)" }
        return part
    }
}
