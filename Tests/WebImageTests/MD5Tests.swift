import Foundation
import Testing
@testable import WebImage

@Suite struct MD5Tests {
    @Test func matchesTheRFC1321TestSuite() {
        let vectors = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (input, digest) in vectors {
            #expect(MD5.hex(Array(input.utf8)) == digest, "MD5(\"\(input)\")")
        }
    }

    @Test(arguments: [0, 1, 55, 56, 57, 63, 64, 65, 127, 128, 1000, 1 << 20])
    func matchesMd5sumOnRandomBytes(length: Int) async throws {
        var random = SplitMix(seed: UInt64(length))
        let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let expected = try await TestSupport.digest(of: bytes, tool: "md5sum")
        #expect(MD5.hex(bytes) == expected)
    }

    @Test func feedingInPiecesGivesTheSameDigest() {
        let bytes = (0..<777).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        var hasher = MD5()
        var index = 0
        for piece in [3, 61, 64, 1, 500, 148] {
            bytes[index..<(index + piece)].withUnsafeBytes { hasher.update($0) }
            index += piece
        }
        #expect(hasher.finalize().hexString == MD5.hex(bytes))
    }
}
