import WebImage

/// imgproxy Pro's `autoquality` settings (`IMGPROXY_AUTOQUALITY_*`, and per URL
/// `autoquality:%method:%target:%min_quality:%max_quality:%allowed_error`, `aq`): the quality of a
/// lossy answer chosen per picture (``WebImage/AutomaticQuality``). Every default is imgproxy's.
public struct AutoQualitySettings: Sendable, Equatable {
    /// How the quality is chosen.
    public enum Method: String, Sendable, CaseIterable {
        /// The fixed quality (`quality`, `format_quality`, `IMGPROXY_QUALITY`): no search.
        case none
        /// The highest quality whose file is at most ``AutoQualitySettings/target`` bytes.
        case size
        /// The lowest quality whose DSSIM against the unencoded result is at most the target.
        case dssim
        /// imgproxy's neural-network first guess, then the DSSIM search. WebImage has no model, and
        /// answers it as imgproxy does without one: as `dssim`.
        case ml
        /// WebImage's own: the lowest quality whose ``WebImage/SSIMULACRA2`` score against the unencoded
        /// result is at least the target (a score, 1–100: 70 is high quality).
        case ssimulacra2
    }

    /// `IMGPROXY_AUTOQUALITY_METHOD`; default ``Method/none``.
    public var method: Method = .none
    /// `IMGPROXY_AUTOQUALITY_TARGET`: the DSSIM aimed at for `dssim` and `ml`, the most bytes for
    /// `size`, the least SSIMULACRA2 score for `ssimulacra2`; default 0.02 (a DSSIM).
    public var target = AutomaticQuality.defaultDSSIMTarget
    /// `IMGPROXY_AUTOQUALITY_MIN`, 1–100; default 70.
    public var minQuality = 70
    /// `IMGPROXY_AUTOQUALITY_MAX`, 1–100; default 80.
    public var maxQuality = 80
    /// `IMGPROXY_AUTOQUALITY_FORMAT_MIN`; default AVIF 60.
    public var formatMinQualities: [ImageFormat: Int] = [.avif: 60]
    /// `IMGPROXY_AUTOQUALITY_FORMAT_MAX`; default AVIF 65.
    public var formatMaxQualities: [ImageFormat: Int] = [.avif: 65]
    /// `IMGPROXY_AUTOQUALITY_ALLOWED_ERROR`: how far from the DSSIM target a try may be and end the
    /// search (`dssim`, `ml`); default 0.002.
    public var allowedError = AutomaticQuality.defaultAllowedError
    /// `IMGPROXY_AUTOQUALITY_MAX_RESOLUTION`, in pixels here (megapixels in the variable): larger
    /// results get the fixed quality; default `nil`: no limit.
    public var maxPixelCount: Int?

    /// Settings with imgproxy's defaults (no automatic quality).
    public init() {}

    /// What these settings have the encoder do: `nil` for ``Method/none``.
    /// - Throws: ``Invalid`` for settings that cannot be searched: a `size` target under 1 byte (imgproxy's
    ///   default target, 0.02, is a DSSIM), a DSSIM target or allowed error that is negative, an
    ///   SSIMULACRA2 score outside 1–100.
    public func automaticQuality() throws(Invalid) -> AutomaticQuality? {
        let method: AutomaticQuality.Method
        switch self.method {
        case .none:
            return nil
        case .size:
            guard target >= 1, target < Double(Int32.max) else {
                throw Invalid(reason: "autoquality: the size method needs a target in bytes (at least 1), got \(target)")
            }
            method = .size(maxBytes: Int(target))
        case .dssim, .ml:
            guard target > 0, allowedError >= 0 else {
                throw Invalid(reason: "autoquality: the DSSIM target must be above 0 and the allowed error at least 0")
            }
            method = .dssim(target: target, allowedError: allowedError)
        case .ssimulacra2:
            guard (1...100).contains(target), allowedError >= 0 else {
                throw Invalid(reason: "autoquality: the ssimulacra2 method needs a score from 1 to 100 as its target, got \(target)")
            }
            method = .ssimulacra2(score: target, allowedError: allowedError)
        }
        return AutomaticQuality(method: method, minQuality: minQuality, maxQuality: maxQuality, formatMinQualities: formatMinQualities,
                                formatMaxQualities: formatMaxQualities, maxPixelCount: maxPixelCount)
    }

    /// Why settings cannot be used.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        /// What is wrong, naming the setting.
        public var reason: String
        /// ``reason``.
        public var description: String { reason }
    }

    /// Applies a URL's `autoquality` arguments (method, target, min, max, allowed error), each empty or
    /// missing one leaving its value as it was.
    mutating func apply(_ reader: ArgumentReader) throws(ProcessingPath.Invalid) {
        try reader.limit(5)
        if reader.has(0) {
            guard let method = Method(rawValue: reader.arguments[0]) else {
                throw ProcessingPath.Invalid(reason: "autoquality: unknown method \(reader.arguments[0]) (none, size, dssim, ml, ssimulacra2)")
            }
            self.method = method
        }
        if let target = try reader.number(1, atLeast: 0, upTo: Double(Int32.max)) { self.target = target }
        if let low = try reader.length(2, upTo: 100) { minQuality = low }
        if let high = try reader.length(3, upTo: 100) { maxQuality = high }
        if let error = try reader.number(4, atLeast: 0, upTo: method == .ssimulacra2 ? 100 : 1) { allowedError = error }
        guard minQuality >= 1, maxQuality >= 1 else { throw ProcessingPath.Invalid(reason: "autoquality: qualities are 1 to 100") }
        guard minQuality <= maxQuality else {
            throw ProcessingPath.Invalid(reason: "autoquality: the minimum quality \(minQuality) is above the maximum \(maxQuality)")
        }
        do {
            _ = try automaticQuality()
        } catch {
            throw ProcessingPath.Invalid(reason: error.reason)
        }
    }
}
