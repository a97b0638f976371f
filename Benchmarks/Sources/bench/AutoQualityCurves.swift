import Foundation
import WebImage

/// `bench autoquality-curves LIST`: for every picture of LIST (resized as `autoquality-encode` does) and
/// JPEG, WebP and AVIF (or the formats `AQ_FORMATS` names, comma-separated), every quality from `AQ_MIN`
/// to `AQ_MAX` (every `AQ_STEP`th, default 1): the bytes, our DSSIM and SSIMULACRA2 against the
/// unencoded resize, and what one try of a quality search costs, split into the encode, the decode and
/// each comparison (milliseconds). One JSON line per quality. What the search does with
/// these curves (how many tries a strategy takes) can then be replayed without encoding again.
enum AutoQualityCurves {
    static let formats = AutoQualityBenchmark.environment["AQ_FORMATS"]
        .map { $0.split(separator: ",").compactMap { ImageFormat(named: String($0)) } } ?? AutoQualityBenchmark.formats

    static let step = max(1, Int(AutoQualityBenchmark.environment["AQ_STEP"] ?? "") ?? 1)

    static func run(list: URL) throws {
        let coders = AutoQualityBenchmark.coders
        for (index, url) in try AutoQualityBenchmark.pictures(list).enumerated() {
            guard let image = try? AutoQualityBenchmark.resized(url) else { continue }
            let dssim = try DSSIM.Reference(image), ssimulacra2 = try SSIMULACRA2.Reference(image)
            let complexity = try ImageComplexity.measure(image)
            for format in formats {
                for quality in stride(from: AutoQualityBenchmark.bounds.lowerBound, through: AutoQualityBenchmark.bounds.upperBound, by: step) {
                    let options = AutoQualityBenchmark.options(quality: quality).resolved(for: format)
                    let started = ContinuousClock.now
                    let data = try coders.encode(image, as: format, options: options)
                    let encoded = ContinuousClock.now
                    let decoded = try coders.decode(data)
                    let decodedAt = ContinuousClock.now
                    let difference = try dssim.difference(to: decoded)
                    let dssimAt = ContinuousClock.now
                    let score = try ssimulacra2.score(of: decoded)
                    let scoredAt = ContinuousClock.now
                    func ms(_ duration: Duration) -> Double {
                        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
                    }
                    let line: [String: Any] = [
                        "index": index, "picture": url.lastPathComponent, "format": format.rawValue, "quality": quality,
                        "complexity": complexity, "bytes": data.count, "dssim": difference, "ssimulacra2": score,
                        "encode_ms": ms(encoded - started), "decode_ms": ms(decodedAt - encoded),
                        "dssim_ms": ms(dssimAt - decodedAt), "ssimulacra2_ms": ms(scoredAt - dssimAt),
                    ]
                    print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
                }
            }
        }
    }
}
