import Foundation
import Testing
@testable import WebImage

/// A download's body in memory it owns (``ReceivedBody``): bytes appended or received into room at
/// its end, in order, and handed over as `Data` without a copy.
@Suite struct ReceivedBodyTests {
    /// The bytes 0, 1, 2… (wrapping) from `start`, `count` of them.
    func pattern(from start: Int, count: Int) -> [UInt8] {
        (start..<(start + count)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    }

    /// With a promised length, the room handed out lies in one block that never moves, and ``take()``
    /// hands that very block over: the bytes are written once, where the `Data` reads them.
    @Test func aReservedBodyIsWrittenOnceAndHandedOverWithoutACopy() {
        let body = ReceivedBody()
        body.reserve(300_000)
        var rooms: [UnsafeMutableRawPointer] = []
        var written = 0
        while written < 300_000 {
            let step = min(70_000, 300_000 - written)
            let source = pattern(from: written, count: step)
            let count = body.append(upTo: step) { room in
                rooms.append(room.baseAddress!)
                room.copyBytes(from: source)
                return step
            }
            #expect(count == step)
            written += step
        }
        #expect(rooms.count == 5)
        for (index, room) in rooms.enumerated() {
            #expect(room == rooms[0] + index * 70_000, "room \(index) is not where the block continues")
        }
        let data = body.take()
        #expect(data.count == 300_000)
        #expect(data.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) } == rooms[0], "take() copied the bytes")
        #expect(Array(data) == pattern(from: 0, count: 300_000))
        #expect(body.isEmpty && body.count == 0)
        #expect(body.take().isEmpty)
    }

    /// Without a promised length the block grows as bytes arrive; appends, room written only in
    /// part, and none at all keep the order; ``copy()`` is a snapshot the body does not change.
    @Test func anUnreservedBodyGrowsAndKeepsItsOrder() {
        let body = ReceivedBody()
        var expected: [UInt8] = []
        var snapshot = Data()
        for index in 0..<400 {
            let piece = pattern(from: expected.count, count: 1000 + index)
            if index.isMultiple(of: 2) {
                piece.withUnsafeBytes { body.append($0.baseAddress!, count: $0.count) }
                expected += piece
            } else {
                // Room for the whole piece, of which only half is written.
                let half = piece.count / 2
                #expect(body.append(upTo: piece.count) { room in
                    room.copyBytes(from: piece[0..<half])
                    return half
                } == half)
                expected += piece[0..<half]
            }
            #expect(body.append(upTo: 10) { _ in 0 } == 0, "room left unwritten adds nothing")
            if index == 200 { snapshot = body.copy() }
        }
        #expect(body.count == expected.count)
        #expect(body.withUnsafeBytes { Array($0) } == expected)
        #expect(Array(snapshot) == Array(expected[0..<snapshot.count]))
        #expect(Array(body.take()) == expected)
    }

    /// A kept partial that a `206` continues starts the body again; a body shorter than promised is
    /// handed over at its own length.
    @Test func aBodyStartsAgainFromAPartialAndEndsAtItsOwnLength() {
        let body = ReceivedBody()
        body.reserve(1000)
        _ = body.append(upTo: 5) { room in
            room.copyBytes(from: [9, 9, 9, 9, 9])
            return 5
        }
        body.replace(with: Data([1, 2, 3]))
        #expect(body.count == 3)
        _ = body.append(upTo: 4) { room in
            room.copyBytes(from: [4, 5])
            return 2
        }
        let data = body.take()
        #expect(data == Data([1, 2, 3, 4, 5]))
        #expect(data.count == 5)
    }
}
