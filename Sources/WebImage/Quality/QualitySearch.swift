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
    /// - DSSIM: a bisection on integer quality within the format's range, started where the
    ///   picture's ``ImageComplexity`` says (busy pictures near the top). Each try is encoded,
    ///   decoded and compared with the unencoded picture (after ``EncodeOptions/maxPixelSize``,
    ///   composited over ``EncodeOptions/backgroundColor`` for a format without alpha), which is
    ///   prepared once. The first try within the allowed error ends it; otherwise the lowest
    ///   quality at or under the target is kept, or the range's top when none is. Once tries on
    ///   both sides of the target are known, the next is a secant step between them, and a
    ///   bisection whenever a secant step did not halve what was left: at most
    ///   2⌈log₂(range)⌉ + 1 encodes (9 for imgproxy's default 70–80; 4 to 5 on average in the benchmark).
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
            let start = Self.startingQuality(in: search.range, complexity: try ImageComplexity.measure(image))
            return try search.lowestLookingRight(target: target, allowedError: allowedError, start: start) { data in
                try reference.difference(to: try self.decode(data))
            }
        case .ssimulacra2(let score, let allowedError):
            // Searched as a difference from 100 (larger: worse), as DSSIM is.
            let reference = try SSIMULACRA2.Reference(try Self.unencoded(image, as: format, options: fixed))
            let start = Self.startingQuality(in: search.range, complexity: try ImageComplexity.measure(image))
            var result = try search.lowestLookingRight(target: 100 - score, allowedError: allowedError, start: start) { data in
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

    /// Where a DSSIM search starts in `range`: at the bottom for a flat picture (complexity 0), at the
    /// top from complexity 20 up (heavy grain), in proportion between.
    static func startingQuality(in range: ClosedRange<Int>, complexity: Double) -> Int {
        let share = min(max(complexity / 20, 0), 1)
        return range.lowerBound + Int((Double(range.upperBound - range.lowerBound) * share).rounded())
    }

    /// The bisection, over an encode at a quality; each quality is encoded at most once.
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
        /// within `allowedError` of it at once; the range's top when none is. Once a try on each side
        /// of the target is known, the next quality is where the line through them meets the target
        /// (a secant step, rounded up), else the middle of what is left: the difference falls smoothly
        /// with quality, so the secant usually lands within a step or two.
        mutating func lowestLookingRight(target: Double, allowedError: Double, start: Int,
                                         measure: (Data) throws -> Double) throws -> QualitySearchResult {
            var (low, high) = (range.lowerBound, range.upperBound)
            var quality = min(max(start, low), high)
            var best: (quality: Int, data: Data, difference: Double)?
            var tooLossy: (quality: Int, difference: Double)?
            var differences: [Int: Double] = [:]
            var secantWidth: Int?   // the width left before a secant step, to check it at least halved it
            while low <= high {
                let data = try file(at: quality)
                let difference = try measure(data)
                differences[quality] = difference
                if abs(difference - target) <= allowedError {
                    return QualitySearchResult(data: data, quality: quality, encodes: encodes, difference: difference)
                }
                if difference > target {
                    low = quality + 1
                    if tooLossy.map({ quality > $0.quality }) ?? true { tooLossy = (quality, difference) }
                } else {
                    if best.map({ quality < $0.quality }) ?? true { best = (quality, data, difference) }
                    high = quality - 1
                }
                guard low <= high else { break }
                quality = (low + high) / 2
                // A secant step, unless the last one did not halve what was left (then a bisection: the
                // bound on encodes holds whatever the curve).
                let halved = secantWidth.map { high - low + 1 <= $0 / 2 } ?? true
                secantWidth = nil
                if halved, let below = tooLossy, let above = best, above.difference < below.difference {
                    let share = (below.difference - target) / (below.difference - above.difference)
                    let guess = Double(below.quality) + share * Double(above.quality - below.quality)
                    secantWidth = high - low + 1
                    quality = min(max(Int(guess.rounded(.up)), low), high)
                }
            }
            if let best { return QualitySearchResult(data: best.data, quality: best.quality, encodes: encodes, difference: best.difference) }
            let top = range.upperBound
            let data = try file(at: top)
            let difference = try differences[top] ?? measure(data)
            return QualitySearchResult(data: data, quality: top, encodes: encodes, difference: difference)
        }
    }
}
