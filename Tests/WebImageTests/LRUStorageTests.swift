import Testing
@testable import WebImage

@Suite struct LRUStorageTests {
    /// The obviously correct model: an array of (key, value, cost), most recent first.
    struct Model {
        var entries: [(key: Int, value: Int, cost: Int)] = []
        mutating func get(_ key: Int) -> Int? {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: index)
            entries.insert(entry, at: 0)
            return entry.value
        }
        mutating func set(_ key: Int, _ value: Int, _ cost: Int) {
            entries.removeAll { $0.key == key }
            entries.insert((key, value, cost), at: 0)
        }
        mutating func remove(_ key: Int) -> Int? {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            return entries.remove(at: index).value
        }
        mutating func removeOldest() -> Int? { entries.popLast()?.key }
        var totalCost: Int { entries.reduce(0) { $0 + $1.cost } }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func randomOperationsMatchTheModel(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var lru = LRUStorage<Int, Int>()
        var model = Model()
        for step in 0..<3000 {
            let key = Int(random.next() % 40)
            switch random.next() % 5 {
            case 0, 1:
                let cost = Int(random.next() % 100)
                lru.set(step, forKey: key, cost: cost)
                model.set(key, step, cost)
            case 2:
                #expect(lru.value(forKey: key, now: MonotonicClock.nanoseconds) == model.get(key))
            case 3:
                #expect(lru.removeValue(forKey: key) == model.remove(key))
            default:
                #expect(lru.removeLeastRecentlyUsed()?.key == model.removeOldest())
            }
            lru.checkInvariants()
            #expect(lru.keysByRecency == model.entries.map(\.key))
            #expect(lru.totalCost == model.totalCost)
        }
    }

    @Test func expiredEntriesAreMissesAndAreRemoved() {
        var lru = LRUStorage<String, Int>()
        let past = MonotonicClock.nanoseconds() - 1_000_000_000
        lru.set(1, forKey: "old", cost: 5, expiration: past)
        lru.set(2, forKey: "new", cost: 5)
        #expect(lru.value(forKey: "old", now: MonotonicClock.nanoseconds) == nil)
        #expect(lru.count == 1 && lru.totalCost == 5)
        lru.set(3, forKey: "old", cost: 1, expiration: past)
        #expect(lru.removeExpired(now: MonotonicClock.nanoseconds()).map(\.key) == ["old"])
        #expect(lru.keysByRecency == ["new"])
        lru.checkInvariants()
    }
}
