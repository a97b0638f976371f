import Foundation
import Testing
@testable import WebImage

@Suite struct ImageChecksumTests {
    @Test func checksumIsTheSHA256OfTheRGBAExpansion() throws {
        // sha256 of the bytes 00 00 00 ff 80 80 80 ff (two gray pixels as RGBA), from sha256sum.
        let image = try Image(width: 2, height: 1, pixelFormat: .gray8, pixels: [0, 128])
        #expect(image.rgbaSHA256() == "c43d105c8761b390722ed8de7d0a46c97d6d0ff45fb2637affd51f4eaaa9af91")
    }

    @Test func sha256MatchesTheStandardVectors() {
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test(arguments: [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 100_000])
    func sha256MatchesSha256sumOnRandomBytes(length: Int) async throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let expected = try await TestSupport.digest(of: bytes, tool: "sha256sum")
        #expect(SHA256.hex(bytes) == expected)
    }

    @Test func feedingInPiecesGivesTheSameDigest() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var hasher = SHA256()
        var index = 0
        for piece in [1, 62, 1, 64, 200, 672] {
            bytes[index..<(index + piece)].withUnsafeBytes { hasher.update($0) }
            index += piece
        }
        #expect(hasher.finalize().hexString == SHA256.hex(bytes))
    }
}
