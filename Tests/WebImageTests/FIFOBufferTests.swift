import Testing
@testable import WebImage

/// The one FIFO of the package's job pools and waiter lists: order kept across drains and compactions.
@Suite struct FIFOBufferTests {
    @Test func elementsComeOutInTheOrderTheyWentInAcrossCompactions() {
        var buffer = FIFOBuffer<Int>(compactionThreshold: 4)
        var expected: [Int] = [], taken: [Int] = []
        var next = 0
        // Interleaved: three in, two out, so the taken front crosses the threshold many times.
        for _ in 0..<200 {
            for _ in 0..<3 { buffer.append(next); expected.append(next); next += 1 }
            for _ in 0..<2 { if let value = buffer.popFirst() { taken.append(value) } }
        }
        #expect(buffer.count == 200)
        while let value = buffer.popFirst() { taken.append(value) }
        #expect(taken == expected && buffer.isEmpty && buffer.popFirst() == nil)
    }

    @Test func removingByPredicateKeepsTheRestInOrder() {
        var buffer = FIFOBuffer<Int>()
        buffer.append(contentsOf: 0..<10)
        _ = buffer.popFirst()
        #expect(buffer.removeAll(where: { $0 % 3 == 0 }) == [3, 6, 9])
        #expect(buffer.removeAll() == [1, 2, 4, 5, 7, 8] && buffer.isEmpty)
    }
}
