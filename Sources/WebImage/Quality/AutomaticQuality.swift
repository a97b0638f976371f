/// A quality chosen per picture instead of one fixed number (imgproxy Pro's `autoquality`,
/// Cloudinary's `q_auto`): the encoder is run a few times and the quality whose file meets the
/// target is kept. Set it as ``EncodeOptions/automaticQuality``; every lossy still encode through
/// ``CoderRegistry/encode(_:as:options:)`` then searches (JPEG, lossy WebP, AVIF, HEIC, lossy JPEG
/// XL). Lossless encodes, lossless formats and animations keep ``EncodeOptions/compressionQuality``.
public struct AutomaticQuality: Sendable, Hashable {
    /// What the search aims for.
    public enum Method: Sendable, Hashable {
        /// The highest quality whose file is at most this many bytes (imgproxy's `size`); when even
        /// the lowest quality does not fit, the lowest quality's file.
        case size(maxBytes: Int)
        /// The lowest quality whose file looks at most this different from the unencoded picture,
        /// by ``DSSIM`` (imgproxy's `dssim`; its default target is 0.02). A file whose DSSIM is within
        /// `allowedError` of the target ends the search at once (imgproxy's default 0.002).
        case dssim(target: Double, allowedError: Double)
        /// The lowest quality whose file scores at least `score` by ``SSIMULACRA2`` against the
        /// unencoded picture (100: identical; 70: high quality); a file within `allowedError` of it
        /// ends the search at once. WebImage's own method (`aq:ssimulacra2:…` in the server), beside
        /// imgproxy's: DSSIM weighs coarse structure, SSIMULACRA2 fine detail and ringing too, and
        /// it keeps every picture at a floor of look with fewer bytes.
        case ssimulacra2(score: Double, allowedError: Double)
    }

    /// What the search aims for.
    public var method: Method
    /// The lowest quality it may choose, 1–100 (imgproxy's `IMGPROXY_AUTOQUALITY_MIN`); default 70.
    public var minQuality: Int
    /// The highest quality it may choose, 1–100 (`IMGPROXY_AUTOQUALITY_MAX`); default 80.
    public var maxQuality: Int
    /// Lowest qualities that replace ``minQuality`` for these formats
    /// (`IMGPROXY_AUTOQUALITY_FORMAT_MIN`); default AVIF 60, as imgproxy (AVIF's 63 looks like JPEG's 80).
    public var formatMinQualities: [ImageFormat: Int]
    /// Highest qualities that replace ``maxQuality`` for these formats
    /// (`IMGPROXY_AUTOQUALITY_FORMAT_MAX`); default AVIF 65.
    public var formatMaxQualities: [ImageFormat: Int]
    /// Pictures with more pixels than this are encoded at the fixed quality, without a search
    /// (`IMGPROXY_AUTOQUALITY_MAX_RESOLUTION`, in pixels here); default `nil`: no limit.
    public var maxPixelCount: Int?

    /// imgproxy's default target for ``Method/dssim(target:allowedError:)``: 0.02.
    public static let defaultDSSIMTarget = 0.02
    /// imgproxy's default allowed error: 0.002.
    public static let defaultAllowedError = 0.002

    /// Creates a setting; every parameter but `method` defaults as its property says.
    public init(method: Method, minQuality: Int = 70, maxQuality: Int = 80, formatMinQualities: [ImageFormat: Int] = [.avif: 60],
                formatMaxQualities: [ImageFormat: Int] = [.avif: 65], maxPixelCount: Int? = nil) {
        self.method = method
        self.minQuality = minQuality
        self.maxQuality = maxQuality
        self.formatMinQualities = formatMinQualities
        self.formatMaxQualities = formatMaxQualities
        self.maxPixelCount = maxPixelCount
    }

    /// The DSSIM search at `target` (default 0.02) with imgproxy's other defaults.
    public static func dssim(target: Double = defaultDSSIMTarget, allowedError: Double = defaultAllowedError) -> AutomaticQuality {
        AutomaticQuality(method: .dssim(target: target, allowedError: allowedError))
    }

    /// The SSIMULACRA2 search for a score of at least `score`, with imgproxy's other defaults and an
    /// allowed error of 0.5 (half a point of the score's 100).
    public static func ssimulacra2(score: Double, allowedError: Double = 0.5) -> AutomaticQuality {
        AutomaticQuality(method: .ssimulacra2(score: score, allowedError: allowedError))
    }

    /// The size search for files of at most `maxBytes`, with imgproxy's other defaults.
    public static func size(maxBytes: Int) -> AutomaticQuality {
        AutomaticQuality(method: .size(maxBytes: maxBytes))
    }

    /// The quality range (1–100, lowest first) it searches for `format`: the format's own bounds, else
    /// the general ones, clamped to 1...100 and ordered.
    public func qualityRange(for format: ImageFormat) -> ClosedRange<Int> {
        let low = min(max(formatMinQualities[format] ?? minQuality, 1), 100)
        let high = min(max(formatMaxQualities[format] ?? maxQuality, 1), 100)
        return min(low, high)...max(low, high)
    }

    /// The part of a variant's key that names it: every setting that changes the bytes.
    var keyPart: String {
        var part: String
        switch method {
        case .size(let bytes): part = "aqsize\(bytes)"
        case .dssim(let target, let error): part = "aqdssim\(Self.keyNumber(target)):\(Self.keyNumber(error))"
        case .ssimulacra2(let score, let error): part = "aqssimulacra2\(Self.keyNumber(score)):\(Self.keyNumber(error))"
        }
        part += ":\(minQuality)-\(maxQuality)"
        for (format, quality) in formatMinQualities.sorted(by: { $0.key.rawValue < $1.key.rawValue }) { part += ":min\(format.rawValue)\(quality)" }
        for (format, quality) in formatMaxQualities.sorted(by: { $0.key.rawValue < $1.key.rawValue }) { part += ":max\(format.rawValue)\(quality)" }
        if let pixels = maxPixelCount { part += ":px\(pixels)" }
        return part
    }

    /// A number written the same way in every process: in millionths, rounded.
    private static func keyNumber(_ value: Double) -> String {
        value.isFinite ? "\(Int((min(max(value, -1e9), 1e9) * 1_000_000).rounded()))u" : "nan"
    }
}
