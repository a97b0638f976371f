import Foundation
import Testing
@testable import WebImage

@Suite struct FailedURLBlocklistTests {
    func url(_ index: Int) -> URL {
        URL(string: "https://example.com/\(index).png")!
    }

    @Test func anInsertedURLIsContainedUntilRemoved() {
        let list = FailedURLBlocklist()
        #expect(!list.contains(url(1)))
        list.insert(url(1), for: .seconds(86_400))
        #expect(list.contains(url(1)))
        #expect(!list.contains(url(2)))
        #expect(list.count == 1)

        list.remove(url(1))
        #expect(!list.contains(url(1)))
        #expect(list.count == 0)
    }

    @Test func removingAURLThatIsNotThereChangesNothing() {
        let list = FailedURLBlocklist()
        list.insert(url(1), for: .seconds(86_400))
        list.remove(url(2))
        #expect(list.contains(url(1)))
        #expect(list.count == 1)
    }

    @Test func removeAllEmptiesTheList() {
        let list = FailedURLBlocklist()
        for index in 0..<5 { list.insert(url(index), for: .seconds(86_400)) }
        #expect(list.count == 5)
        list.removeAll()
        #expect(list.count == 0)
        for index in 0..<5 { #expect(!list.contains(url(index))) }
    }

    @Test func aZeroOrNegativeDurationBlocksNothing() {
        let list = FailedURLBlocklist()
        list.insert(url(1), for: .zero)
        list.insert(url(2), for: .seconds(-5))
        #expect(!list.contains(url(1)))
        #expect(!list.contains(url(2)))
        #expect(list.count == 0)
    }

    @Test func anEntryStopsBlockingWhenItExpires() async throws {
        let list = FailedURLBlocklist()
        let url = url(1)
        list.insert(url, for: .milliseconds(1))
        try await waitUntil { !list.contains(url) }
        #expect(!list.contains(url))
        #expect(list.count == 0)   // the expired entry was dropped, not just ignored
    }

    @Test func insertingAgainReplacesTheExpiry() async throws {
        let list = FailedURLBlocklist()
        let start = ContinuousClock.now
        list.insert(url(1), for: .milliseconds(1))
        list.insert(url(1), for: .seconds(86_400))
        try await waitUntil { ContinuousClock.now > start + .milliseconds(20) }
        #expect(list.contains(url(1)))
        #expect(list.count == 1)
    }

    @Test func pastCapacityTheOldestEntriesGo() {
        let list = FailedURLBlocklist(capacity: 3)
        for index in 1...5 {
            list.insert(url(index), for: .seconds(86_400 * index))
            #expect(list.count <= 3)
        }
        #expect(list.count == 3)
        #expect(!list.contains(url(1)))
        #expect(!list.contains(url(2)))
        #expect(list.contains(url(3)))
        #expect(list.contains(url(4)))
        #expect(list.contains(url(5)))
    }

    @Test func pastCapacityWithEqualDurationsTheEarliestInsertedGo() {
        let list = FailedURLBlocklist(capacity: 2)
        for index in 1...4 { list.insert(url(index), for: .seconds(86_400)) }
        #expect(list.count == 2)
        #expect(!list.contains(url(1)))
        #expect(!list.contains(url(2)))
        #expect(list.contains(url(3)))
        #expect(list.contains(url(4)))
    }

    @Test func pastCapacityEveryExpiredEntryGoesFirst() async throws {
        let list = FailedURLBlocklist(capacity: 3)
        let start = ContinuousClock.now
        list.insert(url(1), for: .milliseconds(1))
        list.insert(url(2), for: .milliseconds(1))
        list.insert(url(3), for: .seconds(86_400))
        #expect(list.count == 3)
        try await waitUntil { ContinuousClock.now > start + .milliseconds(20) }
        list.insert(url(4), for: .seconds(86_400))
        // Both expired entries were dropped, not only the one needed to get back to capacity.
        #expect(list.count == 2)
        #expect(list.contains(url(3)))
        #expect(list.contains(url(4)))
    }
}
