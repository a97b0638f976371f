import Foundation
import Synchronization
import Testing
@testable import WebImage
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The shared-download bookkeeping, driven directly as the session delegate would (no network, no timing).
@Suite struct DownloadOperationTests {
    let url = URL(string: "http://example.com/a.png")!

    func makeOperation() -> DownloadOperation {
        DownloadOperation(key: url.absoluteString, request: ImageLoadRequest(url: url), sequence: 1) { _ in }
    }

    func response(length: Int) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Content-Length": "\(length)"])!
    }

    /// Adds caller `id` and returns the task waiting for its result.
    func join(_ operation: DownloadOperation, id: UInt64, progress: ImageLoadProgressHandler? = nil) async -> Task<ImageLoadResponse, any Error> {
        operation.reserve(id)
        let added = Mutex(false)
        let task = Task {
            try await withCheckedThrowingContinuation { continuation in
                operation.addWaiter(id, continuation: continuation, progress: progress)
                added.withLock { $0 = true }
            }
        }
        while !added.withLock({ $0 }) { await Task.yield() }
        return task
    }

    @Test func aLateJoinerFirstGetsEverythingReceivedSoFarThenEachNewChunk() async throws {
        let operation = makeOperation()
        let config = DownloaderConfig()
        let early = await join(operation, id: 1)
        #expect(operation.received(response(length: 6), config: config))
        #expect(operation.received(Data([1, 2]), maxBytes: 100))
        #expect(operation.received(Data([3, 4]), maxBytes: 100))
        let chunks = Mutex<[Data]>([])
        let late = await join(operation, id: 2) { progress in chunks.withLock { $0.append(progress.chunk) } }
        #expect(operation.received(Data([5, 6]), maxBytes: 100))
        operation.completed(error: nil as (any Error)?, config: config)
        #expect(chunks.withLock { $0 } == [Data([1, 2, 3, 4, 5, 6])])
        #expect(try await late.value.data == Data([1, 2, 3, 4, 5, 6]))
        #expect(try await early.value.data == Data([1, 2, 3, 4, 5, 6]))
    }

    /// A caller that joins after the last chunk but before the end gets the whole body as progress
    /// when the download succeeds (its catch-up would otherwise wait for a chunk that never comes).
    @Test func aJoinerAfterTheLastChunkStillGetsTheWholeBodyAsProgress() async throws {
        let operation = makeOperation()
        let config = DownloaderConfig()
        let early = await join(operation, id: 1)
        #expect(operation.received(response(length: 4), config: config))
        #expect(operation.received(Data([1, 2, 3, 4]), maxBytes: 100))
        let chunks = Mutex<[Data]>([])
        let late = await join(operation, id: 2) { progress in chunks.withLock { $0.append(progress.chunk) } }
        operation.completed(error: nil as (any Error)?, config: config)
        #expect(try await late.value.data == Data([1, 2, 3, 4]))
        #expect(chunks.withLock { $0 } == [Data([1, 2, 3, 4])], "the late joiner heard nothing of the body")
        #expect(try await early.value.data == Data([1, 2, 3, 4]))
    }

    @Test func aBodyShorterThanItsContentLengthIsTruncatedEvenWhenTheSessionSaysUnknown() async throws {
        let operation = makeOperation()
        let waiter = await join(operation, id: 1)
        #expect(operation.received(response(length: 10), config: DownloaderConfig()))
        #expect(operation.received(Data([1, 2, 3]), maxBytes: 100))
        operation.completed(error: URLError(.unknown), config: DownloaderConfig())
        await #expect(throws: WebImageError.truncatedResponse(received: 3, expected: 10, url: url)) { try await waiter.value }
    }

    @Test func theFirstVerdictWins() async throws {
        let operation = makeOperation()
        let waiter = await join(operation, id: 1)
        operation.fail(WebImageError.timedOut(url: url))
        operation.completed(error: nil as (any Error)?, config: DownloaderConfig())
        await #expect(throws: WebImageError.timedOut(url: url)) { try await waiter.value }
        #expect(operation.isFinished)
    }

    @Test func aCallerCancelledBeforeJoiningIsResumedAtOnceAndAbandonsTheDownload() async throws {
        let operation = makeOperation()
        operation.reserve(7)
        #expect(operation.isWanted)
        operation.removeWaiter(7)   // before it joined: it was the only caller, so the download stops now
        #expect(!operation.isWanted)
        #expect(operation.isFinished)
        #expect(!operation.reserve(8), "a stopped download takes no new caller: the scheduler starts another")
        await #expect(throws: WebImageError.cancelled(url: url)) {
            try await withCheckedThrowingContinuation { (continuation: DownloadOperation.Continuation) in
                operation.addWaiter(7, continuation: continuation, progress: nil)
            }
        }
    }

    @Test func passingTheSizeLimitWhileReadingFails() async throws {
        let operation = makeOperation()
        let waiter = await join(operation, id: 1)
        let chunked = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
        #expect(operation.received(chunked, config: DownloaderConfig()))
        #expect(operation.received(Data(count: 60), maxBytes: 100))
        #expect(!operation.received(Data(count: 60), maxBytes: 100))
        await #expect(throws: WebImageError.responseTooLarge(limit: 100, url: url)) { try await waiter.value }
    }

    /// Bytes a transport receives straight into the body (``DownloadOperation/receive(upTo:maxBytes:write:)``)
    /// join it in order and are reported as chunks are: each waiter's progress gets them, a late
    /// joiner everything so far first, and the response carries the whole body.
    @Test func bytesReceivedStraightIntoTheBodyAreReportedAsChunksAre() async throws {
        let operation = makeOperation()
        let config = DownloaderConfig()
        let earlyChunks = Mutex<[Data]>([])
        let early = await join(operation, id: 1) { progress in earlyChunks.withLock { $0.append(progress.chunk) } }
        #expect(operation.received(response(length: 6), config: config))
        /// Receives `bytes` as a `recv(2)` would: into the room, as many as fit.
        func receive(_ bytes: [UInt8], limit: Int) -> Bool? {
            operation.receive(upTo: limit, maxBytes: 100) { room in
                let count = min(room.count, bytes.count)
                room.copyBytes(from: bytes[0..<count])
                return count
            }
        }
        #expect(receive([1, 2], limit: 6) == true)
        #expect(receive([], limit: 4) == true, "a read that found nothing yet")
        let lateChunks = Mutex<[Data]>([])
        let late = await join(operation, id: 2) { progress in lateChunks.withLock { $0.append(progress.chunk) } }
        #expect(receive([3, 4, 5, 6], limit: 4) == true)
        operation.completed(error: nil as (any Error)?, config: config)
        #expect(earlyChunks.withLock { $0 } == [Data([1, 2]), Data([3, 4, 5, 6])])
        #expect(lateChunks.withLock { $0 } == [Data([1, 2, 3, 4, 5, 6])])
        #expect(try await early.value.data == Data([1, 2, 3, 4, 5, 6]))
        #expect(try await late.value.data == Data([1, 2, 3, 4, 5, 6]))
    }

    /// The room handed out never passes the size limit: a read that wants more gets what is left
    /// under it, and the next one past it fails the download (nothing more is written).
    @Test func roomForReceivingNeverPassesTheSizeLimit() async throws {
        let operation = makeOperation()
        let waiter = await join(operation, id: 1)
        let chunked = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [:])!
        #expect(operation.received(chunked, config: DownloaderConfig()))
        var rooms: [Int] = []
        let fill: (UnsafeMutableRawBufferPointer) -> Int = { room in
            rooms.append(room.count)
            room.initializeMemory(as: UInt8.self, repeating: 7)
            return room.count
        }
        #expect(operation.receive(upTo: 60, maxBytes: 100, write: fill) == true)
        #expect(operation.receive(upTo: 60, maxBytes: 100, write: fill) == true)
        #expect(operation.receive(upTo: 1, maxBytes: 100, write: fill) == false)
        #expect(rooms == [60, 40], "the second room stops at the limit; past it, none is given")
        await #expect(throws: WebImageError.responseTooLarge(limit: 100, url: url)) { try await waiter.value }
        #expect(operation.receive(upTo: 10, maxBytes: 100, write: fill) == nil, "finished: no room, the transport drops the rest")
        #expect(rooms == [60, 40])
    }

    @Test func aFinishedOperationNeverAnswersARedirect() async throws {
        // FoundationNetworking traps when a redirect answer reaches a task cancelled after it asked.
        let operation = makeOperation()
        let request = URLRequest(url: url)
        var answers: [URLRequest?] = []
        operation.answerRedirect(maxRedirects: 1, request: request) { answers.append($0) }
        operation.answerRedirect(maxRedirects: 1, request: request) { answers.append($0) }
        #expect(answers == [request, nil], "within the limit, then past it")
        operation.fail(.timedOut(url: url))
        operation.answerRedirect(maxRedirects: 5, request: request) { answers.append($0) }
        #expect(answers.count == 2, "a failed (and cancelled) operation's task must not be answered")
    }
}
