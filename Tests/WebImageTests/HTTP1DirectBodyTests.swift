import Foundation
import Synchronization
import Testing
@testable import WebImage

/// ``HTTP1Client`` receiving a body of known length straight into its owner's storage
/// (``HTTP1BodyRoom``), as the downloader does: what came with the head goes through `onBody`, the
/// rest into the room, in order, never past the body's end; an owner that takes no more, or stops,
/// is obeyed. Over a real socket (``ScriptedServer``), with a body of several receive buffers.
@Suite struct HTTP1DirectBodyTests {
    /// 3 MB of printable bytes in a pattern that shows a lost, doubled or moved byte.
    static let body: [UInt8] = (0..<3_000_000).map { UInt8(33 + ((($0 &* 131) ^ ($0 >> 11)) % 90)) }

    /// The answer: a head with the body's length, then the body (`chunked`: as one chunk).
    static func answer(chunked: Bool = false) -> String {
        let text = String(decoding: body, as: UTF8.self)
        if chunked {
            return "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(body.count, radix: 16) + "\r\n" + text + "\r\n0\r\n\r\n"
        }
        return "HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: \(body.count)\r\n\r\n" + text
    }

    /// What one exchange did: its outcome, every byte in the order it arrived, how many came
    /// through `onBody` and how many into the room, and the limit of each room asked for.
    struct Outcome {
        var succeeded = false
        var arrived: [UInt8] = []
        var delivered = 0
        var received = 0
        var limits: [Int] = []
    }

    /// One exchange with `server` on a client worker; `decide` answers each room request (the room
    /// is written when it says true).
    func exchange(_ server: ScriptedServer, decide: @escaping @Sendable (_ call: Int) -> Bool?) async -> Outcome {
        await withCheckedContinuation { continuation in
            HTTP1Client.shared.run {
                var outcome = Outcome()
                let owner = ReceivedBody()
                let url = URL(string: "http://127.0.0.1:\(server.port)/a.png")!
                let result = HTTP1Client.shared.exchange(
                    HTTP1Client.Request(method: "GET", url: url, headers: []), deadline: .now + .seconds(60),
                    cancellation: HTTP1Cancellation(),
                    bodyRoom: { limit, write in
                        outcome.limits.append(limit)
                        guard let going = decide(outcome.limits.count) else { return nil }
                        guard going else { return false }
                        let count = owner.append(upTo: limit, write)
                        outcome.arrived += owner.withUnsafeBytes { Array($0.suffix(count)) }
                        outcome.received += count
                        return true
                    },
                    onHead: { _ in true },
                    onBody: { piece in
                        outcome.arrived += piece
                        outcome.delivered += piece.count
                        return true
                    })
                if case .success = result { outcome.succeeded = true }
                continuation.resume(returning: outcome)
            }
        }
    }

    @Test(arguments: [false, true])
    func aBodyOfKnownLengthIsReceivedStraightIntoTheRoom(chunked: Bool) async throws {
        let server = try ScriptedServer(answer: Self.answer(chunked: chunked), keepsAlive: true)
        for round in 0..<2 {
            let outcome = await exchange(server) { _ in true }
            #expect(outcome.succeeded)
            #expect(outcome.arrived == Self.body, "round \(round): the bytes are not the body, in order")
            #expect(outcome.delivered <= HTTP1Reader.readSize, "only what came with the head is copied through the reader")
            #expect(outcome.received == Self.body.count - outcome.delivered)
            #expect(outcome.limits.allSatisfy { $0 > 0 && $0 <= HTTP1Reader.directReadSize })
            #expect(outcome.limits.first == min(HTTP1Reader.directReadSize, Self.body.count - outcome.delivered),
                    "the first room asks for what is left of the body, at most a read's worth")
        }
        // One connection, unless the machine is so slow (ThreadSanitizer) that the gap between the two
        // rounds passes the 30 s an idle connection is kept.
        #expect(server.acceptedCount == 1 || testTimeScale > 1, "an answer read to its end leaves the connection for the next")
    }

    /// An owner that takes no more bytes this way (`nil`) gets the rest through `onBody`.
    @Test func anOwnerThatTakesNoMoreGetsTheRestThroughOnBody() async throws {
        let server = try ScriptedServer(answer: Self.answer(), keepsAlive: true)
        let outcome = await exchange(server) { call in call < 3 ? true : nil }
        #expect(outcome.succeeded)
        #expect(outcome.arrived == Self.body)
        #expect(outcome.limits.count == 3, "no room is asked for once the owner took no more")
        #expect(outcome.received > 0)
        #expect(outcome.delivered > HTTP1Reader.readSize, "the rest came through onBody")
    }

    /// An owner that stops (`false`: past its size limit) ends the exchange; the connection, its
    /// answer unread, is not used again.
    @Test func anOwnerThatStopsEndsTheExchangeAndItsConnection() async throws {
        let server = try ScriptedServer(answer: Self.answer(), keepsAlive: true)
        let stopped = await exchange(server) { call in call < 2 }
        #expect(stopped.succeeded, "a stop is the caller's choice, not a failure of the exchange")
        #expect(stopped.limits.count == 2)
        #expect(stopped.arrived.count < Self.body.count)
        #expect(stopped.arrived == Array(Self.body.prefix(stopped.arrived.count)))
        let next = await exchange(server) { _ in true }
        #expect(next.arrived == Self.body)
        #expect(server.acceptedCount == 2, "the stopped answer's connection was used again")
    }

    /// Through the downloader: the body arrives whole, and a progress handler hears every byte.
    @Test func theDownloaderReceivesALargeBodyWholeWithProgress() async throws {
        let server = try ScriptedServer(answer: Self.answer(), keepsAlive: true)
        let downloader = Downloader(config: DownloaderConfig(transport: .automatic))
        let reported = Mutex<(bytes: Int, last: Int)>((0, 0))
        let url = URL(string: "http://127.0.0.1:\(server.port)/a.png")!
        let response = try await downloader.load(ImageLoadRequest(url: url)) { progress in
            reported.withLock { $0 = ($0.bytes + progress.chunk.count, progress.receivedBytes) }
        }
        await downloader.shutdown()
        #expect(Array(response.data) == Self.body)
        #expect(reported.withLock { $0.bytes } == Self.body.count)
        #expect(reported.withLock { $0.last } == Self.body.count)
    }
}
