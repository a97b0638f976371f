import Testing
@testable import WebImage

@Suite struct PNGChunkSchedulerTests {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func chunk(_ type: String, length: Int) -> [UInt8] {
        let size = UInt32(length)
        return (0..<4).map { UInt8(truncatingIfNeeded: size >> (24 - 8 * $0)) } + Array(type.utf8)
            + [UInt8](repeating: 0xAB, count: length) + [0, 0, 0, 0]
    }

    /// Feeds `stream` in `pieceSize` pieces the way PNGIncrementalDecoder does; returns each limit.
    static func limits(_ stream: [UInt8], pieceSize: Int) -> [Int] {
        var scheduler = PNGChunkScheduler()
        var fed = 0, received = 0
        var limits: [Int] = []
        while received < stream.count {
            received = min(received + pieceSize, stream.count)
            let limit = stream[fed..<received].withUnsafeBytes { scheduler.feedLimit(received: $0, startingAt: fed) }
            limits.append(limit)
            fed = limit
        }
        return limits
    }

    @Test func imageDataIsFedAsItArrives() {
        let stream = Self.signature + Self.chunk("IHDR", length: 13) + Self.chunk("IDAT", length: 1000)
        let limits = Self.limits(stream, pieceSize: 100)
        // Every piece goes through at once, except the few bytes of a chunk header cut by a piece end.
        for (index, limit) in limits.enumerated() {
            #expect((index + 1) * 100 - limit < 8 || limit == stream.count, "piece \(index): limit \(limit)")
        }
        #expect(limits.last == stream.count)
    }

    @Test func otherChunksAreHeldBackUntilComplete() {
        let head = Self.signature + Self.chunk("IHDR", length: 13)
        let stream = head + Self.chunk("iCCP", length: 5000) + Self.chunk("IDAT", length: 300)
        let iccpEnd = head.count + 12 + 5000
        var scheduler = PNGChunkScheduler()
        var fed = 0
        for received in stride(from: 1000, through: stream.count, by: 1000) + [stream.count] {
            let limit = stream[fed..<received].withUnsafeBytes { scheduler.feedLimit(received: $0, startingAt: fed) }
            if received < iccpEnd {
                #expect(limit == head.count + 8, "only the iCCP header may be fed before its body is complete")
                #expect(scheduler.heldChunkEnd == iccpEnd)
            } else {
                #expect(limit == received)
            }
            fed = limit
        }
        #expect(fed == stream.count)
    }

    @Test func garbageNeverMakesTheLimitGoBackwards() {
        var state: UInt32 = 12345
        let garbage = (0..<5000).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        for pieceSize in [1, 13, 512] {
            let limits = Self.limits(garbage, pieceSize: pieceSize)
            #expect(zip(limits, limits.dropFirst()).allSatisfy { $0 <= $1 })
            #expect(limits.allSatisfy { $0 <= garbage.count })
        }
    }
}
