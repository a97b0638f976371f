import Foundation
import Testing
@testable import WebImage

@Suite struct PartialDownloadStoreTests {
    func partial(_ count: Int, tag: String = "\"v1\"") -> PartialDownload {
        PartialDownload(data: Data(repeating: 7, count: count), validator: .entityTag(tag), headers: [:])
    }

    @Test func takeReturnsTheKeptPartialOnceAndRemovesIt() {
        let store = PartialDownloadStore(limit: 1_000)
        #expect(store.keep(partial(10), forKey: "a"))
        #expect(store.take("a") == partial(10))
        #expect(store.take("a") == nil)
        #expect(store.totalBytes == 0 && store.count == 0)
    }

    @Test func evictsLeastRecentlyKeptFirstPastTheLimit() {
        let store = PartialDownloadStore(limit: 100)
        store.keep(partial(40), forKey: "a")
        store.keep(partial(40), forKey: "b")
        store.keep(partial(40, tag: "\"v2\""), forKey: "a")   // kept again: now the most recent
        store.keep(partial(30), forKey: "c")                  // 110 bytes: the oldest, b, goes
        #expect(store.keysByRecency == ["c", "a"])
        #expect(store.totalBytes == 70)
        #expect(store.take("a")?.validator == .entityTag("\"v2\""))
        store.checkInvariants()
    }

    @Test func aPartialLargerThanTheWholeLimitIsNotKeptAndDropsTheStaleOne() {
        let store = PartialDownloadStore(limit: 100)
        store.keep(partial(50), forKey: "a")
        store.keep(partial(20), forKey: "b")
        #expect(!store.keep(partial(101), forKey: "a"))
        #expect(store.keysByRecency == ["b"])
        #expect(store.keep(partial(100), forKey: "a"))   // exactly the limit fits, alone
        #expect(store.keysByRecency == ["a"])
        store.checkInvariants()
    }

    @Test func aZeroLimitKeepsNothingAndLoweringTheLimitDropsTheOldest() {
        #expect(!PartialDownloadStore(limit: 0).keep(partial(1), forKey: "a"))
        let store = PartialDownloadStore(limit: 100)
        store.keep(partial(30), forKey: "a")
        store.keep(partial(30), forKey: "b")
        store.keep(partial(30), forKey: "c")
        store.setLimit(60)
        #expect(store.keysByRecency == ["c", "b"])
        store.setLimit(0)
        #expect(store.count == 0 && store.totalBytes == 0)
        store.checkInvariants()
    }

    /// The obviously correct model: (key, cost), most recently kept first.
    struct Model {
        var limit: Int
        var entries: [(key: String, cost: Int)] = []

        mutating func keep(_ key: String, _ cost: Int) -> Bool {
            entries.removeAll { $0.key == key }
            guard cost > 0, cost <= limit else { return false }
            entries.insert((key, cost), at: 0)
            trim()
            return true
        }

        mutating func take(_ key: String) -> Int? {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            return entries.remove(at: index).cost
        }

        mutating func setLimit(_ newLimit: Int) {
            limit = max(0, newLimit)
            trim()
        }

        mutating func trim() {
            while entries.reduce(0, { $0 + $1.cost }) > limit { entries.removeLast() }
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func randomOperationsMatchTheModel(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let store = PartialDownloadStore(limit: 500)
        var model = Model(limit: 500)
        for _ in 0..<2_000 {
            let key = "k\(random.next() % 25)"
            switch random.next() % 6 {
            case 0, 1, 2:
                let cost = Int(random.next() % 160)
                let kept = cost > 0 ? store.keep(partial(cost), forKey: key) : false
                if cost > 0 { #expect(kept == model.keep(key, cost)) }
            case 3:
                #expect(store.take(key)?.data.count == model.take(key))
            case 4:
                store.remove(key)
                _ = model.take(key)
            default:
                let limit = Int(random.next() % 700)
                store.setLimit(limit)
                model.setLimit(limit)
            }
            store.checkInvariants()
            #expect(store.keysByRecency == model.entries.map(\.key))
            #expect(store.totalBytes == model.entries.reduce(0) { $0 + $1.cost })
            #expect(store.totalBytes <= store.limit)
        }
    }
}
