import Foundation

/// What an encode with an ``AutomaticQuality`` did: the file it kept and how it found it.
public struct QualitySearchResult: Sendable, Hashable {
    /// The encoded file.
    public var data: Data
    /// The quality it was written at, 1–100; `nil` when no search ran (the fixed quality was used:
    /// lossless, animated, a format without a quality, or above ``AutomaticQuality/maxPixelCount``).
    public var quality: Int?
    /// Encodes run to find it (1 without a search).
    public var encodes: Int
    /// The kept file's ``DSSIM`` against the unencoded picture for a DSSIM search, its ``SSIMULACRA2``
    /// score for an SSIMULACRA2 search; `nil` otherwise.
    public var difference: Double?
}

extension CoderRegistry {
    /// Encodes `image` as ``encode(_:as:options:)`` does, searching the quality when `options` carry
    /// an ``EncodeOptions/automaticQuality`` and the encode is a lossy still one (see
    /// ``AutomaticQuality``), and says what the search did.
    ///
    /// - DSSIM: a search on integer quality within the format's range for the lowest quality whose
    ///   file looks right, started where the format's average curve of DSSIM against quality
    ///   (`QualityCurve`) meets the target. Each try is encoded, decoded and compared with the
    ///   unencoded picture (after ``EncodeOptions/maxPixelSize``, composited over
    ///   ``EncodeOptions/backgroundColor`` for a format without alpha), which is prepared once. The
    ///   first try within the allowed error ends it; otherwise the lowest quality at or under the
    ///   target is kept, or the range's top when none is. While the tries are all on one side of the
    ///   target, the next steps by the curve's slope; once both sides are known, it is where the log
    ///   of the difference, drawn straight between them, meets the target (a secant step); and a
    ///   bisection whenever a step did not halve what was left: at most 2⌈log₂(range)⌉ + 1 encodes
    ///   (9 for imgproxy's default 70–80; 2.6 to 3.7 on average in the benchmark).
    /// - SSIMULACRA2: the same search, for the lowest quality scoring at least the target.
    /// - Size: the top of the range first; when it does not fit, a bisection for the highest quality
    ///   that does, or the bottom's file when none does.
    /// - Throws: what the coder throws, and the comparison's ``ImageCodingError``.
    public func encodeSearchingQuality(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> QualitySearchResult {
        var fixed = options
        fixed.automaticQuality = nil
        guard let automatic = options.automaticQuality, Self.searches(image, as: format, options: options, automatic: automatic) else {
            return QualitySearchResult(data: try encode(image, as: format, options: fixed), quality: nil, encodes: 1)
        }
        var search = Search(range: automatic.qualityRange(for: format)) { quality in
            var options = fixed
            options.compressionQuality = Double(quality) / 100
            return try self.encode(image, as: format, options: options)
        }
        switch automatic.method {
        case .size(let maxBytes):
            return try search.highestFitting(maxBytes: maxBytes)
        case .dssim(let target, let allowedError):
            let reference = try DSSIM.Reference(try Self.unencoded(image, as: format, options: fixed))
            return try search.lowestLookingRight(target: target, allowedError: allowedError, curve: .dssim(for: format)) { data in
                try reference.difference(to: try self.decode(data))
            }
        case .ssimulacra2(let score, let allowedError):
            // Searched as a difference from 100 (larger: worse), as DSSIM is.
            let reference = try SSIMULACRA2.Reference(try Self.unencoded(image, as: format, options: fixed))
            var result = try search.lowestLookingRight(target: 100 - score, allowedError: allowedError, curve: .ssimulacra2(for: format)) { data in
                100 - (try reference.score(of: try self.decode(data)))
            }
            result.difference = result.difference.map { 100 - $0 }
            return result
        }
    }

    /// Whether the quality is searched: a lossy still encode to a format that has a quality, within
    /// the pixel limit.
    static func searches(_ image: Image, as format: ImageFormat, options: EncodeOptions, automatic: AutomaticQuality) -> Bool {
        guard !options.isLossless, format.descriptor?.traits.contains(.quality) == true else { return false }
        if image.isAnimated && !options.firstFrameOnly && format.descriptor?.traits.contains(.animationSave) == true { return false }
        var size = image.size
        if let side = options.maxPixelSize, side > 0, max(size.width, size.height) > side { size = PNGCoder.size(of: size, fittingSide: side) }
        if let limit = automatic.maxPixelCount, limit > 0, size.width * size.height > limit { return false }
        if case .ssimulacra2 = automatic.method, size.width < 8 || size.height < 8 { return false }   // it needs 8×8
        return true
    }

    /// The picture the encoder is given, as it should look: scaled under ``EncodeOptions/maxPixelSize``,
    /// 8 bits, and composited over the background for a format without alpha.
    static func unencoded(_ image: Image, as format: ImageFormat, options: EncodeOptions) throws -> Image {
        let picture = try options.frames(of: image)[0].image
        guard picture.pixelFormat.hasAlpha, format.descriptor?.traits.contains(.alpha) != true else { return picture }
        return try picture.flattened(onto: options.backgroundColor)
    }

    /// The searches, over an encode at a quality; each quality is encoded at most once.
    struct Search {
        let range: ClosedRange<Int>
        let encode: (Int) throws -> Data
        private var files: [Int: Data] = [:]

        init(range: ClosedRange<Int>, encode: @escaping (Int) throws -> Data) {
            self.range = range
            self.encode = encode
        }

        var encodes: Int { files.count }

        mutating func file(at quality: Int) throws -> Data {
            if let data = files[quality] { return data }
            let data = try encode(quality)
            files[quality] = data
            return data
        }

        /// The highest quality whose file has at most `maxBytes` bytes, else the range's bottom.
        mutating func highestFitting(maxBytes: Int) throws -> QualitySearchResult {
            let top = try file(at: range.upperBound)
            if top.count <= maxBytes { return QualitySearchResult(data: top, quality: range.upperBound, encodes: encodes) }
            var (low, high) = (range.lowerBound, range.upperBound - 1)
            var best: (quality: Int, data: Data)?
            while low <= high {
                let quality = (low + high + 1) / 2
                let data = try file(at: quality)
                if data.count <= maxBytes {
                    best = (quality, data)
                    low = quality + 1
                } else {
                    high = quality - 1
                }
            }
            if let best { return QualitySearchResult(data: best.data, quality: best.quality, encodes: encodes) }
            return QualitySearchResult(data: try file(at: range.lowerBound), quality: range.lowerBound, encodes: encodes)
        }

        /// The lowest quality whose file's difference (`measure`) is at most `target`, the first
        /// within `allowedError` of it at once; the range's top when none is. It starts where `curve`
        /// meets the target (the top for a target of 0), and goes on as ``nextGuess(tooLossy:best:target:curve:)``
        /// says, or by a bisection when the last guess did not halve what was left: the bound on
        /// encodes holds whatever the picture's curve.
        mutating func lowestLookingRight(target: Double, allowedError: Double, curve: QualityCurve,
                                         measure: (Data) throws -> Double) throws -> QualitySearchResult {
            var (low, high) = (range.lowerBound, range.upperBound)
            var quality = Self.clamped(curve.quality(meeting: target)?.rounded(), to: low...high) ?? high
            var best: Try?
            var tooLossy: Try?
            var bestData: Data?
            var differences: [Int: Double] = [:]
            var guessedWidth: Int?   // the width left before a guessed step, to check it at least halved it
            while low <= high {
                let data = try file(at: quality)
                let difference = try measure(data)
                differences[quality] = difference
                if abs(difference - target) <= allowedError {
                    return QualitySearchResult(data: data, quality: quality, encodes: encodes, difference: difference)
                }
                if difference > target {
                    low = quality + 1
                    if tooLossy.map({ quality > $0.quality }) ?? true { tooLossy = Try(quality: quality, difference: difference) }
                } else {
                    if best.map({ quality < $0.quality }) ?? true { (best, bestData) = (Try(quality: quality, difference: difference), data) }
                    high = quality - 1
                }
                guard low <= high else { break }
                let halved = guessedWidth.map { high - low + 1 <= $0 / 2 } ?? true
                guessedWidth = nil
                quality = (low + high) / 2
                if halved, let guess = Self.clamped(Self.nextGuess(tooLossy: tooLossy, best: best, target: target, curve: curve), to: low...high) {
                    guessedWidth = high - low + 1
                    quality = guess
                }
            }
            if let best, let bestData {
                return QualitySearchResult(data: bestData, quality: best.quality, encodes: encodes, difference: best.difference)
            }
            let top = range.upperBound
            let data = try file(at: top)
            let difference = try differences[top] ?? measure(data)
            return QualitySearchResult(data: data, quality: top, encodes: encodes, difference: difference)
        }

        /// A quality tried and its difference.
        struct Try {
            let quality: Int
            let difference: Double
        }

        /// The next quality to try from the highest too-lossy try and the lowest good one: with both,
        /// where the log of the difference drawn straight between them meets the target (the
        /// difference falls about exponentially with quality, so this usually lands within a step),
        /// rounded up; with one, a step by `curve`'s slope from it, rounded away from it; `nil` when
        /// neither helps (a difference or target of 0, or tries that do not fall).
        static func nextGuess(tooLossy: Try?, best: Try?, target: Double, curve: QualityCurve) -> Double? {
            switch (tooLossy, best) {
            case let (below?, above?):
                guard above.difference < below.difference else { return nil }
                let share = above.difference > 0 && target > 0
                    ? log(below.difference / target) / log(below.difference / above.difference)
                    : (below.difference - target) / (below.difference - above.difference)
                return (Double(below.quality) + share * Double(above.quality - below.quality)).rounded(.up)
            case let (known?, nil), let (nil, known?):
                guard let step = curve.step(from: known.difference, to: target) else { return nil }
                let guess = Double(known.quality) + step
                return step > 0 ? guess.rounded(.up) : guess.rounded(.down)
            case (nil, nil):
                return nil
            }
        }

        /// `quality` as a whole quality within `range`; `nil` for `nil` or NaN.
        static func clamped(_ quality: Double?, to range: ClosedRange<Int>) -> Int? {
            guard let quality, !quality.isNaN else { return nil }
            return Int(min(max(quality, Double(range.lowerBound)), Double(range.upperBound)))
        }
    }
}
