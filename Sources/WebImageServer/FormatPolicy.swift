import WebImage

/// How a server picks an answer's format, as imgproxy 4's `determineOutputFormat`: an enforced
/// modern format the client accepts, else the format the URL names, else an automatic modern format
/// the client accepts, else the preferred formats (the source's own when listed). AVIF is tried
/// before WebP. The choice is made once per request, before the source is known, and handed to the
/// manager as a ``WebImage/VariantFormat``.
struct FormatPolicy: Sendable {
    /// ``ImageServerConfig/autoFormats``, ``ImageServerConfig/enforcedFormats``,
    /// ``ImageServerConfig/preferredFormats``.
    var automatic: Set<ImageFormat> = []
    var enforced: Set<ImageFormat> = []
    var preferred: [ImageFormat] = [.jpeg, .png, .gif]
    /// ``ImageServerConfig/alwaysRasterizesSVG``.
    var alwaysRasterizesVectors = false
    /// ``ImageServerConfig/bestFormat``.
    var best = BestFormatSettings()
    /// The coders a modern format must be writable by.
    var coders: CoderRegistry = .shared

    /// A server's policy.
    init(config: ImageServerConfig) {
        (automatic, enforced, preferred, coders) = (config.autoFormats, config.enforcedFormats, config.preferredFormats, config.coders)
        alwaysRasterizesVectors = config.alwaysRasterizesSVG
        best = config.bestFormat
    }

    /// imgproxy's defaults: nothing negotiated, JPEG, PNG, GIF preferred; `negotiates`: AVIF and WebP
    /// automatic, when `coders` write them.
    init(negotiates: Bool = false, coders: CoderRegistry = .shared) {
        automatic = negotiates ? [.avif, .webp] : []
        self.coders = coders
    }

    /// The format for a URL naming `named` (or none), from a client sending `accept`, and whether the
    /// answer depends on `Accept` (it must then say `Vary: Accept`).
    /// `asksBest`: the URL asks for `best` (or names nothing on a server whose default is `best`): the
    /// preferred formats and the negotiated ones the client accepts are the candidates.
    func format(named: ImageFormat?, asksBest: Bool = false, accept: String?) -> (format: VariantFormat, variesByAccept: Bool) {
        if let modern = modern(among: enforced, accept: accept) { return (.exactly(modern), true) }
        if let named { return (.exactly(named), !enforced.isEmpty) }
        if asksBest || best.isDefault {
            var candidates = BestFormat(accept: nil, preferred: preferred, coders: coders).candidates
            for format in ImageFormatRegistry.shared.negotiableFormats
            where automatic.union(enforced).contains(format) && format.isAccepted(by: accept) && coders.canEncode(format) && !candidates.contains(format) {
                candidates.append(format)
            }
            let choice = BestFormat(candidates: candidates, complexityThreshold: best.complexityThreshold, maxPixelCount: best.maxPixelCount)
            return (.best(choice), !enforced.isEmpty || !automatic.isEmpty)
        }
        if let modern = modern(among: automatic, accept: accept) { return (.exactly(modern), true) }
        return (.preferred(preferred), !enforced.isEmpty || !automatic.isEmpty)
    }

    /// Whether a vector source (SVG) is answered as its own document for a URL naming `named` (or
    /// none) and skipping `skipped`, as imgproxy's `shouldSkipStandardProcessing`: when the URL names
    /// SVG, or names nothing and the server does not always rasterise (or it does, and the URL skips
    /// SVG's processing). Whatever the rest of the policy picks for raster sources.
    func passesVectorSource(named: ImageFormat?, skipped: Set<ImageFormat>, asksBest: Bool = false) -> Bool {
        if (asksBest || best.isDefault) && named == nil && !best.allowsSkips { return false }
        guard let named else { return !alwaysRasterizesVectors || skipped.contains { coders.canPassThrough($0) } }
        return coders.canPassThrough(named)
    }

    /// The first of the registry's negotiable formats (JPEG XL, AVIF, WebP) that is among `formats`, the
    /// client accepts and a coder writes.
    private func modern(among formats: Set<ImageFormat>, accept: String?) -> ImageFormat? {
        ImageFormatRegistry.shared.negotiableFormats.first { formats.contains($0) && $0.isAccepted(by: accept) && coders.canEncode($0) }
    }
}
