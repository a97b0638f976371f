import Foundation
import Testing
@testable import WebImage

/// The search for the lowest quality that looks right, over made-up curves of difference against
/// quality (a try's file is `quality` bytes long, so the curve reads the quality back from it): the
/// average curve the search starts from, curves far off it, and a curve that does not fall steadily.
@Suite struct QualitySearchTests {
    /// Runs the search over `curve` in `range` for `target`; the qualities tried, in order, and the result.
    func search(_ curve: @escaping (Int) -> Double, in range: ClosedRange<Int>, target: Double, allowedError: Double = 0,
                model: QualityCurve = .ssimulacra2(for: .webp)) throws -> (tried: [Int], result: QualitySearchResult) {
        var tried: [Int] = []
        var search = CoderRegistry.Search(range: range) { quality in
            tried.append(quality)
            return Data(count: quality)
        }
        let result = try search.lowestLookingRight(target: target, allowedError: allowedError, curve: model) { data in curve(data.count) }
        return (tried, result)
    }

    /// 2⌈log₂ n⌉ + 1 for a range of n qualities.
    func bound(_ range: ClosedRange<Int>) -> Int {
        2 * Int(ceil(log2(Double(range.count)))) + 1
    }

    @Test func onTheAverageCurveTheFirstTryIsTheAnswerOrNextToIt() throws {
        let model = QualityCurve.ssimulacra2(for: .webp)
        let curve: (Int) -> Double = { exp(model.intercept - model.slope * Double($0)) }
        for score in [50.0, 62.5, 70, 75, 80] {
            let (tried, result) = try search(curve, in: 30...95, target: 100 - score)
            let expected = try #require((30...95).first { curve($0) <= 100 - score })
            #expect(result.quality == expected, "score \(score): kept \(result.quality ?? 0), the lowest is \(expected)")
            #expect(tried.count <= 2, "score \(score): tried \(tried)")
        }
    }

    /// Curves twice and half as steep as the average, and shifted up and down: the lowest quality
    /// meeting the target is found exactly, within the bound on encodes, each quality encoded once.
    @Test(arguments: [0.5, 1, 2], [-1.0, 0, 1])
    func offTheAverageTheLowestQualityIsFoundWithinTheBound(steepness: Double, shift: Double) throws {
        let model = QualityCurve.dssim(for: .jpeg)
        let curve: (Int) -> Double = { exp(model.intercept + shift - model.slope * steepness * Double($0)) }
        for range in [30...95, 70...80, 1...100] {
            for target in [0.0005, 0.002, 0.01, 0.05] {
                let (tried, result) = try search(curve, in: range, target: target, model: model)
                #expect(tried.count <= bound(range) && Set(tried).count == tried.count, "\(range), \(target): tried \(tried)")
                if let expected = range.first(where: { curve($0) <= target }) {
                    #expect(result.quality == expected && result.difference == curve(expected), "\(range), \(target): \(result.quality ?? 0), not \(expected)")
                } else {
                    #expect(result.quality == range.upperBound, "no quality meets \(target) in \(range): the top")
                }
            }
        }
    }

    /// A curve with a sawtooth over its fall (as WebP's DSSIM, which is not monotonic step to step):
    /// the bound still holds, and what is kept meets the target.
    @Test func aCurveThatDoesNotFallSteadilyStaysWithinTheBound() throws {
        let curve: (Int) -> Double = { quality in 40 * exp(-0.03 * Double(quality)) * (quality % 3 == 0 ? 1.4 : 1) }
        for target in stride(from: 2.0, through: 30, by: 2) {
            let (tried, result) = try search(curve, in: 1...100, target: target)
            #expect(tried.count <= bound(1...100), "\(target): tried \(tried)")
            #expect(try #require(result.difference) <= target || result.quality == 100, "\(target): kept \(result.quality ?? 0)")
        }
    }

    /// A plateau a hair above the target, then a cliff: the curve's slope asks for steps of one
    /// quality at a time, and the bisection that follows a guess that did not halve the range keeps
    /// the search within its bound.
    @Test func aPlateauJustAboveTheTargetIsBisectedNotWalked() throws {
        for cliff in [40, 77, 96] {
            let curve: (Int) -> Double = { $0 < cliff ? 1.001 : 0.5 }
            let (tried, result) = try search(curve, in: 1...100, target: 1)
            #expect(tried.count <= bound(1...100), "cliff at \(cliff): tried \(tried)")
            #expect(result.quality == cliff)
        }
    }

    @Test func aTryWithinTheAllowedErrorEndsTheSearch() throws {
        let model = QualityCurve.ssimulacra2(for: .avif)
        let curve: (Int) -> Double = { exp(model.intercept - model.slope * Double($0)) }
        let start = Int(try #require(model.quality(meeting: 30)).rounded())
        let (tried, result) = try search(curve, in: 30...95, target: 30, allowedError: 5, model: model)
        #expect(tried == [start] && result.quality == start)
    }

    /// A target of 0 (identical) is met by no lossy file: the search starts at the top and keeps it.
    @Test func aTargetOfNothingStartsAtTheTop() throws {
        let (tried, result) = try search({ 0.5 / Double($0) }, in: 30...95, target: 0)
        #expect(tried.first == 95 && result.quality == 95 && tried.count <= bound(30...95))
    }

    /// Every format's curve falls with quality and meets the usual targets below the top.
    @Test(arguments: [ImageFormat.jpeg, .webp, .avif, .heic, .jxl])
    func everyFormatHasAFallingCurve(format: ImageFormat) throws {
        for curve in [QualityCurve.dssim(for: format), .ssimulacra2(for: format)] {
            #expect(curve.slope > 0.005 && curve.slope < 0.2, "\(format): \(curve)")
        }
        let dssim = try #require(QualityCurve.dssim(for: format).quality(meeting: AutomaticQuality.defaultDSSIMTarget))
        let ssimulacra2 = try #require(QualityCurve.ssimulacra2(for: format).quality(meeting: 100 - 70))
        #expect(dssim < 100, "\(format): DSSIM 0.02 at \(dssim)")
        #expect((1...100).contains(Int(ssimulacra2)), "\(format): SSIMULACRA2 70 at \(ssimulacra2)")
    }
}
