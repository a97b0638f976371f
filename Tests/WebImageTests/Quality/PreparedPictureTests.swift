import Foundation
import Testing
@testable import WebImage

/// A prepared picture keeps one candidate's buffers from one comparison to the next (C's spare
/// candidate): reused, they must give each candidate the value a fresh reference gives it, in turn
/// and from several threads at once.
@Suite struct PreparedPictureTests {
    /// Grain of other seeds over the same gradient: candidates that differ from the original and from
    /// each other.
    static func candidates() throws -> [Image] {
        try (1...6).map { seed in
            let other = try QualityPictures.grainy(seed: UInt64(seed) + 100)
            return try ServerFixture.coders.decode(ServerFixture.coders.encode(
                other, as: .jpeg, options: EncodeOptions(compressionQuality: Double(20 + 12 * seed) / 100)))
        }
    }

    @Test(arguments: ["DSSIM", "SSIMULACRA2"])
    func aReusedReferenceGivesEachCandidateWhatAFreshOneGives(metricName: String) async throws {
        let metric: PerceptualMetric = metricName == "DSSIM" ? .dssim : .ssimulacra2
        let original = try QualityPictures.grainy()
        let candidates = try Self.candidates()
        let fresh = try candidates.map { try PreparedPicture(original, for: metric).compare($0) }
        #expect(Set(fresh).count == candidates.count, "the candidates differ: \(fresh)")

        let reference = try PreparedPicture(original, for: metric)
        let inTurn = try (candidates + candidates.reversed()).map { try reference.compare($0) }
        #expect(inTurn == fresh + fresh.reversed(), "in turn: \(inTurn), fresh: \(fresh)")

        // At once: all but one comparison find the spare taken and prepare their own.
        let atOnce = try await withThrowingTaskGroup(of: (Int, Double).self) { group in
            for _ in 0..<4 {
                for (index, candidate) in candidates.enumerated() {
                    group.addTask { (index, try reference.compare(candidate)) }
                }
            }
            return try await group.reduce(into: [(Int, Double)]()) { $0.append($1) }
        }
        #expect(atOnce.count == 4 * candidates.count)
        for (index, value) in atOnce {
            #expect(value == fresh[index], "candidate \(index) at once: \(value), fresh: \(fresh[index])")
        }
        #expect(try reference.compare(original) == (metricName == "DSSIM" ? 0 : 100))
    }
}
