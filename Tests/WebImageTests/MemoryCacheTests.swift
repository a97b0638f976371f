import Foundation
import Testing
@testable import WebImage

@Suite struct MemoryCacheTests {
    func image(_ byteCount: Int) throws -> Image {
        try Image(width: byteCount, height: 1, pixelFormat: .gray8, pixels: [UInt8](repeating: 1, count: byteCount))
    }

    @Test func evictsLeastRecentlyUsedFirstWhenTheCountLimitIsReached() {
        let cache = MemoryCache<String, Int>(countLimit: 2)
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")
        #expect(cache.value(forKey: "a") == nil)
        #expect(cache.value(forKey: "b") == 2 && cache.value(forKey: "c") == 3)
        #expect(cache.count == 2 && cache.evictionCount == 1)
    }

    @Test func costLimitIsStrict() {
        let cache = MemoryCache<String, Int>(totalCostLimit: 100, entryCostLimitRatio: 1)
        for index in 0..<10 { cache.setValue(index, forKey: "\(index)", cost: 30) }
        #expect(cache.totalCost <= 100)
        #expect(cache.count == 3)
        #expect(cache.keysByRecency == ["9", "8", "7"])
        cache.checkInvariants()
    }

    @Test func readingRefreshesRecency() {
        let cache = MemoryCache<String, Int>(countLimit: 2)
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        _ = cache.value(forKey: "a")
        cache.setValue(3, forKey: "c")
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache.value(forKey: "b") == nil)
    }

    @Test func entriesCostingMoreThanTheRatioAreRefused() {
        let cache = MemoryCache<String, Int>(totalCostLimit: 1000)
        #expect(cache.setValue(1, forKey: "small", cost: 100))
        #expect(!cache.setValue(2, forKey: "big", cost: 101))
        #expect(cache.value(forKey: "big") == nil)
        #expect(cache.totalCost == 100)
        cache.setValue(3, forKey: "small", cost: 50)
        #expect(!cache.setValue(4, forKey: "small", cost: 500))
        #expect(cache.value(forKey: "small") == nil, "a refused replacement must not leave the stale value")
    }

    @Test func replacingAKeyKeepsTheTotalCostRight() {
        let cache = MemoryCache<String, Int>()
        cache.setValue(1, forKey: "a", cost: 10)
        cache.setValue(2, forKey: "a", cost: 3)
        #expect(cache.totalCost == 3 && cache.count == 1 && cache["a"] == 2)
    }

    @Test func trimAndRemoveAll() {
        let cache = MemoryCache<Int, Int>()
        for index in 0..<10 { cache.setValue(index, forKey: index, cost: 10) }
        cache.trim(toCost: 55)
        #expect(cache.totalCost == 50 && cache.value(forKey: 4) == nil && cache.value(forKey: 5) == 5)
        cache.trim(toCount: 2)
        #expect(cache.count == 2)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test func loweringALimitEvictsAtOnce() {
        let cache = MemoryCache<Int, Int>()
        for index in 0..<10 { cache.setValue(index, forKey: index, cost: 1) }
        cache.countLimit = 4
        #expect(cache.count == 4)
        cache.totalCostLimit = 2
        #expect(cache.totalCost == 2)
    }

    @Test func entriesExpireAfterTheirTimeToLive() async throws {
        let cache = MemoryCache<String, Int>()
        // Generous times: under ThreadSanitizer a busy suite can hold this task back for minutes.
        cache.setValue(1, forKey: "short", timeToLive: .seconds(1))
        cache.setValue(2, forKey: "long", timeToLive: .seconds(24 * 3600))
        #expect(cache.value(forKey: "short") == 1)
        try await Task.sleep(for: .milliseconds(1500))
        #expect(!cache.contains("short"))
        #expect(cache.value(forKey: "short") == nil)
        #expect(cache.value(forKey: "long") == 2)
    }

    @Test func anEvictedImageStillInUseIsReturnedAndPromoted() throws {
        let cache = MemoryCache<String, Image>(countLimit: 1)
        let held = try image(10)
        cache.setValue(held, forKey: "held", cost: held.cost)
        cache.setValue(try image(10), forKey: "other", cost: 10)
        #expect(cache.count == 1)
        #expect(cache.value(forKey: "held") === held)
        #expect(cache.keysByRecency == ["held"])
        withExtendedLifetime(held) {}
    }

    @Test func anEvictedImageNobodyHoldsIsGone() throws {
        let cache = MemoryCache<String, Image>(countLimit: 1)
        cache.setValue(try image(10), forKey: "dropped", cost: 10)
        cache.setValue(try image(10), forKey: "other", cost: 10)
        #expect(cache.value(forKey: "dropped") == nil)
        #expect(!cache.contains("dropped"))
    }

    @Test func removingForgetsValuesInUseToo() throws {
        let cache = MemoryCache<String, Image>(countLimit: 1)
        let held = try image(4)
        cache.setValue(held, forKey: "held")
        cache.setValue(try image(4), forKey: "other")
        cache.removeValue(forKey: "held")
        #expect(cache.value(forKey: "held") == nil)
        withExtendedLifetime(held) {}
    }

    @Test func manyThreadsReadingAndWritingKeepTheLimits() async {
        let cache = MemoryCache<Int, Int>(totalCostLimit: 500, countLimit: 50, entryCostLimitRatio: 1)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SplitMix(seed: UInt64(worker))
                    for step in 0..<5000 {
                        let key = Int(random.next() % 200)
                        if step % 3 == 0 {
                            cache.setValue(step, forKey: key, cost: Int(random.next() % 20))
                        } else if step % 17 == 0 {
                            cache.removeValue(forKey: key)
                        } else {
                            _ = cache.value(forKey: key)
                        }
                    }
                }
            }
        }
        cache.checkInvariants()
        #expect(cache.totalCost <= 500 && cache.count <= 50)
    }
}
