import Foundation
import Testing
@testable import WebImage

/// The queue of downloads waiting for a slot: priority first, then age (FIFO or LIFO).
@Suite struct DownloadQueueTests {
    func operation(_ sequence: UInt64, _ priority: DownloadPriority = .normal, host: String = "a.example") -> DownloadOperation {
        let url = URL(string: "http://\(host)/\(sequence).png")!
        return DownloadOperation(key: url.absoluteString, request: ImageLoadRequest(url: url, priority: priority), sequence: sequence) { _ in }
    }

    @Test func theMostUrgentComesFirstThenTheOldestOrTheNewest() {
        let low = operation(1, .low), first = operation(2), second = operation(3), high = operation(4, .high)
        for order in [DownloadExecutionOrder.fifo, .lifo] {
            var queue = DownloadQueue()
            for each in [low, first, second, high] { queue.append(each) }
            #expect(queue.count == 4)
            var popped: [UInt64] = []
            while let next = queue.popNext(order: order, where: { _ in true }) { popped.append(next.sequence) }
            #expect(popped == (order == .fifo ? [4, 2, 3, 1] : [4, 3, 2, 1]))
            #expect(queue.count == 0)
        }
    }

    @Test func aRaisedPriorityMovesAnOperationToItsNewListByAge() {
        var queue = DownloadQueue()
        let old = operation(1), young = operation(5), highOld = operation(2, .high), highYoung = operation(9, .high)
        for each in [old, highOld, young, highYoung] { queue.append(each) }
        young.raisePriority(to: .high)
        queue.reprioritize(young)
        var popped: [UInt64] = []
        while let next = queue.popNext(order: .fifo, where: { _ in true }) { popped.append(next.sequence) }
        #expect(popped == [2, 5, 9, 1])
    }

    @Test func ineligibleOperationsAreSkippedNotLost() {
        var queue = DownloadQueue()
        let busyHost = operation(1, host: "busy.example"), other = operation(2, host: "free.example")
        queue.append(busyHost)
        queue.append(other)
        let popped = queue.popNext(order: .fifo) { $0.url.host != "busy.example" }
        #expect(popped === other)
        #expect(queue.contains(busyHost) && !queue.contains(other))
        let removed = queue.remove(busyHost), removedAgain = queue.remove(busyHost)
        #expect(removed)
        #expect(!removedAgain, "removing twice finds nothing")
        #expect(queue.count == 0)
    }
}
