import Foundation
import Synchronization
import Testing
@testable import WebImage

/// A flag tasks can set and tests can poll.
private final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

private struct ProducerFailure: Error, Equatable {}

/// Queues every event.
@Sendable private func appendAll(_ pending: inout [Int], _ event: Int) {
    pending.append(event)
}

/// Adds each event to the last pending one, so a slow consumer gets one running sum.
@Sendable private func sumIntoLast(_ pending: inout [Int], _ event: Int) {
    if let last = pending.last { pending[pending.count - 1] = last + event } else { pending.append(event) }
}

/// A `.progress` download event.
private func progress(_ received: Int, of expected: Int?, _ chunk: Data) -> DownloadEvent {
    .progress(ImageLoadProgress(receivedBytes: received, expectedBytes: expected, chunk: chunk))
}

private func drain<Event: Sendable>(_ channel: EventChannel<Event>) async throws -> [Event] {
    var events = [Event]()
    while let event = try await channel.next() { events.append(event) }
    return events
}

@Suite struct EventChannelTests {
    @Test func eventsArriveInOrderThenTheEnd() async throws {
        let channel = EventChannel<Int>(coalesce: appendAll) { yield in
            for value in 0..<50 { yield(value) }
        }
        #expect(try await drain(channel) == Array(0..<50))
        #expect(try await channel.next() == nil)   // stays ended
    }

    @Test func aProducerThatYieldsNothingEndsTheStreamAtOnce() async throws {
        let channel = EventChannel<Int>(coalesce: appendAll) { _ in }
        #expect(try await channel.next() == nil)
        #expect(try await channel.next() == nil)
    }

    @Test func theProducersErrorIsThrownAfterTheEarlierEvents() async throws {
        let channel = EventChannel<Int>(coalesce: appendAll) { yield in
            yield(1)
            yield(2)
            throw ProducerFailure()
        }
        #expect(try await channel.next() == 1)
        #expect(try await channel.next() == 2)
        await #expect(throws: ProducerFailure()) { try await channel.next() }
        #expect(try await channel.next() == nil)   // the error is thrown once, then the stream is over
    }

    @Test func anErrorThrownAfterTheConsumerDrainedEverythingStillReachesIt() async throws {
        let produced = Flag()
        let channel = EventChannel<Int>(coalesce: appendAll) { yield in
            yield(1)
            produced.set()
            throw ProducerFailure()
        }
        try await waitUntil { produced.isSet }
        #expect(try await channel.next() == 1)
        await #expect(throws: ProducerFailure()) { try await channel.next() }
    }

    @Test func aSlowConsumerGetsTheCoalescedEventsAsOne() async throws {
        let finished = Flag()
        let channel = EventChannel<Int>(coalesce: sumIntoLast) { yield in
            for value in 1...100 { yield(value) }
            finished.set()
        }
        try await waitUntil { finished.isSet }
        #expect(finished.isSet)
        #expect(try await channel.next() == 5050)
        #expect(try await channel.next() == nil)
    }

    @Test func droppingTheChannelCancelsTheProducer() async throws {
        let started = Flag()
        let cancelled = Flag()
        do {
            let channel = EventChannel<Int>(coalesce: appendAll) { _ in
                started.set()
                do {
                    try await Task.sleep(for: busyMachineBound)   // until cancelled (a fixed 60 s ran out under a loaded ThreadSanitizer run)
                } catch is CancellationError {
                    cancelled.set()
                }
            }
            try await waitUntil { started.isSet }
            #expect(started.isSet)
            _ = channel
        }
        try await waitUntil { cancelled.isSet }
        #expect(cancelled.isSet)
    }

    @Test func cancellingTheWaitingConsumerCancelsTheProducerAndEndsTheWait() async throws {
        let cancelled = Flag()
        let channel = EventChannel<Int>(coalesce: appendAll) { yield in
            yield(1)
            do {
                try await Task.sleep(for: busyMachineBound)   // until cancelled (a fixed 60 s ran out under a loaded ThreadSanitizer run)
            } catch {
                cancelled.set()
                throw error
            }
        }
        #expect(try await channel.next() == 1)
        let consumer = Task { try await channel.next() }
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        #expect(cancelled.isSet)
    }

    @Test func imageEventCoalescingKeepsTheLatestProgressAndPartialImageAndEveryOtherEvent() throws {
        let url = URL(string: "https://example.com/cat.png")!
        let firstPartial = try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [0])
        let secondPartial = try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [128])
        let cached = ImageResult(image: firstPartial, data: nil, cacheType: .disk, url: url)
        let final = ImageResult(image: secondPartial, data: Data([1, 2, 3]), cacheType: .none, url: url)

        var pending = [ImageLoadEvent]()
        for event: ImageLoadEvent in [
            .cachedImage(cached),
            .progress(receivedBytes: 10, expectedBytes: 100),
            .partialImage(firstPartial),
            .progress(receivedBytes: 50, expectedBytes: 100),
            .partialImage(secondPartial),
            .progress(receivedBytes: 100, expectedBytes: 100),
            .finished(final),
        ] {
            ImageEventStream.coalesce(&pending, event)
        }

        #expect(pending.count == 4)
        guard pending.count == 4 else { return }
        guard case .cachedImage(let first) = pending[0] else { Issue.record("\(pending[0])"); return }
        #expect(first.image === firstPartial && first.cacheType == .disk)
        guard case .progress(let received, let expected) = pending[1] else { Issue.record("\(pending[1])"); return }
        #expect(received == 100 && expected == 100)
        guard case .partialImage(let partial) = pending[2] else { Issue.record("\(pending[2])"); return }
        #expect(partial === secondPartial)
        guard case .finished(let last) = pending[3] else { Issue.record("\(pending[3])"); return }
        #expect(last.image === secondPartial && last.data == Data([1, 2, 3]))
    }

    @Test func imageEventCoalescingNeverMergesCachedImagesOrFinishedResults() throws {
        let url = URL(string: "https://example.com/cat.png")!
        let image = try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [0])
        let result = ImageResult(image: image, data: nil, cacheType: .memory, url: url)
        var pending = [ImageLoadEvent]()
        ImageEventStream.coalesce(&pending, .cachedImage(result))
        ImageEventStream.coalesce(&pending, .cachedImage(result))
        ImageEventStream.coalesce(&pending, .finished(result))
        ImageEventStream.coalesce(&pending, .finished(result))
        #expect(pending.count == 4)
    }

    @Test func downloadEventCoalescingAppendsChunksAndTakesTheLatestCounts() {
        let url = URL(string: "https://example.com/cat.png")!
        var pending = [DownloadEvent]()
        DownloadEventStream.coalesce(&pending, progress(2, of: nil, Data([1, 2])))
        DownloadEventStream.coalesce(&pending, progress(3, of: 6, Data([3])))
        DownloadEventStream.coalesce(&pending, progress(6, of: 6, Data([4, 5, 6])))
        #expect(pending.count == 1)
        guard case .progress(let merged)? = pending.first else { Issue.record("\(pending)"); return }
        #expect(merged.chunk == Data([1, 2, 3, 4, 5, 6]))
        #expect(merged.receivedBytes == 6)
        #expect(merged.expectedBytes == 6)

        DownloadEventStream.coalesce(&pending, .finished(ImageLoadResponse(data: Data([1, 2, 3, 4, 5, 6]), url: url)))
        #expect(pending.count == 2)
        guard case .finished(let response) = pending[1] else { Issue.record("\(pending[1])"); return }
        #expect(response.data == Data([1, 2, 3, 4, 5, 6]))
    }

    @Test func downloadEventCoalescingMergesSlicedChunks() {
        let body = Data(0..<10)
        var pending = [DownloadEvent]()
        DownloadEventStream.coalesce(&pending, progress(4, of: 10, body[2..<6]))
        DownloadEventStream.coalesce(&pending, progress(8, of: 10, body[6..<10]))
        guard case .progress(let merged)? = pending.first, pending.count == 1 else { Issue.record("\(pending)"); return }
        #expect(merged.chunk == Data(2..<10))
        #expect(merged.receivedBytes == 8)
    }

    @Test func aSlowDownloadConsumerGetsOneMergedProgressThenTheResponse() async throws {
        let url = URL(string: "https://example.com/cat.png")!
        let loaded = Flag()
        let stream = DownloadEventStream { progress in
            for index in 0..<100 {
                progress(ImageLoadProgress(receivedBytes: index + 1, expectedBytes: 100, chunk: Data([UInt8(index)])))
            }
            loaded.set()
            return ImageLoadResponse(data: Data(0..<100), url: url)
        }
        try await waitUntil { loaded.isSet }
        var iterator = stream.makeAsyncIterator()
        guard case .progress(let merged)? = try await iterator.next() else { Issue.record("expected one progress"); return }
        #expect(merged.chunk == Data(0..<100))
        #expect(merged.receivedBytes == 100)
        guard case .finished(let response)? = try await iterator.next() else { Issue.record("expected the response"); return }
        #expect(response.data == Data(0..<100))
        #expect(try await iterator.next() == nil)
    }

    @Test func aSlowImageEventConsumerGetsTheLatestProgressAndPartialThenTheResult() async throws {
        let url = URL(string: "https://example.com/cat.png")!
        let partials = try (0..<10).map { try Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [UInt8($0)]) }
        let final = ImageResult(image: partials[9], data: nil, cacheType: .none, url: url)
        let loaded = Flag()
        let stream = ImageEventStream { events in
            for (index, partial) in partials.enumerated() {
                events(.progress(receivedBytes: index + 1, expectedBytes: 10))
                events(.partialImage(partial))
            }
            loaded.set()
            return final
        }
        try await waitUntil { loaded.isSet }
        var received = [ImageLoadEvent]()
        for try await event in stream { received.append(event) }
        #expect(received.count == 3)
        guard received.count == 3 else { return }
        guard case .progress(let bytes, _) = received[0] else { Issue.record("\(received[0])"); return }
        #expect(bytes == 10)
        guard case .partialImage(let partial) = received[1] else { Issue.record("\(received[1])"); return }
        #expect(partial === partials[9])
        guard case .finished(let result) = received[2] else { Issue.record("\(received[2])"); return }
        #expect(result.image === partials[9])
    }
}
