import Foundation
import Testing
@testable import WebImage

@Suite struct StatisticsCountersTests {
    struct Tally: Sendable, Equatable {
        var hits = 0
        var misses = 0
        var slow: Duration = .zero
    }

    @Test func fieldsAddUnderTheLockAndLanesFoldIntoTheirFields() async {
        let counters = StatisticsCounters(Tally(), lanes: 2) { tally, lane, count in
            if lane == 0 { tally.hits += count } else { tally.misses += 10 * count }
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<1000 {
                        counters.add(\.hits)
                        counters.addToLane(0)
                        counters.addToLane(1)
                    }
                }
            }
        }
        counters.update { $0.slow += .seconds(2); $0.misses += 1 }
        #expect(counters.snapshot == Tally(hits: 16000, misses: 80001, slow: .seconds(2)))
    }

    @Test func theManagersMemoryHitLaneCountsALoadAndAHit() {
        let counters = StatisticsCounters.manager()
        counters.addMemoryHitLoad()
        counters.addVariantMemoryHit()
        counters.add(\.loads)
        let snapshot = counters.snapshot
        #expect(snapshot.loads == 2 && snapshot.memoryHits == 1 && snapshot.variantMemoryHits == 1)
    }
}
