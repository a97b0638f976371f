import Foundation
import Testing
@testable import WebImage

@Suite struct CRC32Tests {
    @Test func matchesTheStandardCheckValueInOneGoAndInPieces() {
        let bytes = Array("123456789".utf8)
        #expect(CRC32.checksum(bytes) == 0xCBF4_3926, "the CRC-32 check value")
        #expect(CRC32.checksum(bytes.lazy.map { $0 }) == 0xCBF4_3926, "a sequence without contiguous storage")
        let pieces = bytes.withUnsafeBytes { raw in
            CRC32.update(CRC32.update(0, UnsafeRawBufferPointer(rebasing: raw[..<4])), UnsafeRawBufferPointer(rebasing: raw[4...]))
        }
        #expect(pieces == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0 && CRC32.checksum(Array("IEND".utf8)) == 0xAE42_6082, "PNG's IEND chunk CRC")
    }
}
