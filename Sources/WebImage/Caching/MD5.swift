import Foundation

/// MD5 (RFC 1321), for disk-cache file names as SDWebImage names them. Not for security: MD5 is
/// broken as a cryptographic hash, but it is a fine, fast, stable name for a cache key. The Linux
/// toolchain has no digest library and the package takes no dependencies.
package struct MD5 {
    private var a0: UInt32 = 0x67452301
    private var b0: UInt32 = 0xefcdab89
    private var c0: UInt32 = 0x98badcfe
    private var d0: UInt32 = 0x10325476
    private var buffer = DigestBlockBuffer()

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// K[i] = floor(abs(sin(i + 1)) × 2^32).
    private static let constants: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296)) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var words = (a0, b0, c0, d0)
        buffer.append(bytes) { block in words = Self.compress(block, words) }
        (a0, b0, c0, d0) = words
    }

    mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    mutating func finalize() -> [UInt8] {
        var words = (a0, b0, c0, d0)
        buffer.finish(bigEndianLength: false) { block in words = Self.compress(block, words) }
        return [words.0, words.1, words.2, words.3].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
    }

    /// The lower-case hex MD5 of `bytes`: 32 characters.
    package static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var hasher = MD5()
        hasher.update(bytes)
        return hasher.finalize().hexString
    }

    /// ``hex(_:)`` of bytes in memory, without copying them (the disk cache names files with it).
    package static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        var hasher = MD5()
        hasher.update(bytes)
        let digest = hasher.finalize()
        return String(unsafeUninitializedCapacity: 32) { out in
            let digits: StaticString = "0123456789abcdef"
            for (index, byte) in digest.enumerated() {
                out[2 * index] = digits.utf8Start[Int(byte >> 4)]
                out[2 * index + 1] = digits.utf8Start[Int(byte & 15)]
            }
            return 32
        }
    }

    private static func compress(
        _ chunk: UnsafeRawBufferPointer, _ words: (UInt32, UInt32, UInt32, UInt32)
    ) -> (UInt32, UInt32, UInt32, UInt32) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { message in
            for i in 0..<16 {
                message[i] = UInt32(chunk[4 * i]) | UInt32(chunk[4 * i + 1]) << 8
                    | UInt32(chunk[4 * i + 2]) << 16 | UInt32(chunk[4 * i + 3]) << 24
            }
            var (a, b, c, d) = words
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                f = f &+ a &+ constants[i] &+ message[g]
                a = d
                d = c
                c = b
                b = b &+ ((f << shifts[i]) | (f >> (32 - shifts[i])))
            }
            return (words.0 &+ a, words.1 &+ b, words.2 &+ c, words.3 &+ d)
        }
    }
}
