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

    /// One round step: `a` becomes `b + ((a + f + x + t) <<< s)`.
    @inline(__always)
    private static func step(_ a: inout UInt32, _ b: UInt32, _ f: UInt32, _ x: UInt32, _ t: UInt32, _ s: UInt32) {
        let sum = a &+ f &+ x &+ t
        a = b &+ ((sum << s) | (sum >> (32 - s)))
    }

    /// RFC 1321's 64 steps on one 64-byte block, written out: the rounds' functions, message
    /// orders, shifts and constants (K[i] = floor(abs(sin(i + 1)) × 2^32)) as literals, so that the
    /// compiler keeps everything in registers. A loop over tables of them (bounds-checked loads, a
    /// switch per step) ran at about 415 MB/s, a fifth of a cold PNG request's non-codec time in
    /// the `ETag` of its 200 KB output.
    private static func compress(
        _ chunk: UnsafeRawBufferPointer, _ words: (UInt32, UInt32, UInt32, UInt32)
    ) -> (UInt32, UInt32, UInt32, UInt32) {
        precondition(chunk.count >= 64)
        @inline(__always) func x(_ i: Int) -> UInt32 { UInt32(littleEndian: chunk.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)) }
        let x0 = x(0), x1 = x(1), x2 = x(2), x3 = x(3), x4 = x(4), x5 = x(5), x6 = x(6), x7 = x(7)
        let x8 = x(8), x9 = x(9), x10 = x(10), x11 = x(11), x12 = x(12), x13 = x(13), x14 = x(14), x15 = x(15)
        var (a, b, c, d) = words
        @inline(__always) func f(_ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 { (b & c) | (~b & d) }
        @inline(__always) func g(_ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 { (d & b) | (~d & c) }
        @inline(__always) func h(_ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 { b ^ c ^ d }
        @inline(__always) func i(_ b: UInt32, _ c: UInt32, _ d: UInt32) -> UInt32 { c ^ (b | ~d) }

        step(&a, b, f(b, c, d), x0, 0xd76aa478, 7); step(&d, a, f(a, b, c), x1, 0xe8c7b756, 12)
        step(&c, d, f(d, a, b), x2, 0x242070db, 17); step(&b, c, f(c, d, a), x3, 0xc1bdceee, 22)
        step(&a, b, f(b, c, d), x4, 0xf57c0faf, 7); step(&d, a, f(a, b, c), x5, 0x4787c62a, 12)
        step(&c, d, f(d, a, b), x6, 0xa8304613, 17); step(&b, c, f(c, d, a), x7, 0xfd469501, 22)
        step(&a, b, f(b, c, d), x8, 0x698098d8, 7); step(&d, a, f(a, b, c), x9, 0x8b44f7af, 12)
        step(&c, d, f(d, a, b), x10, 0xffff5bb1, 17); step(&b, c, f(c, d, a), x11, 0x895cd7be, 22)
        step(&a, b, f(b, c, d), x12, 0x6b901122, 7); step(&d, a, f(a, b, c), x13, 0xfd987193, 12)
        step(&c, d, f(d, a, b), x14, 0xa679438e, 17); step(&b, c, f(c, d, a), x15, 0x49b40821, 22)

        step(&a, b, g(b, c, d), x1, 0xf61e2562, 5); step(&d, a, g(a, b, c), x6, 0xc040b340, 9)
        step(&c, d, g(d, a, b), x11, 0x265e5a51, 14); step(&b, c, g(c, d, a), x0, 0xe9b6c7aa, 20)
        step(&a, b, g(b, c, d), x5, 0xd62f105d, 5); step(&d, a, g(a, b, c), x10, 0x02441453, 9)
        step(&c, d, g(d, a, b), x15, 0xd8a1e681, 14); step(&b, c, g(c, d, a), x4, 0xe7d3fbc8, 20)
        step(&a, b, g(b, c, d), x9, 0x21e1cde6, 5); step(&d, a, g(a, b, c), x14, 0xc33707d6, 9)
        step(&c, d, g(d, a, b), x3, 0xf4d50d87, 14); step(&b, c, g(c, d, a), x8, 0x455a14ed, 20)
        step(&a, b, g(b, c, d), x13, 0xa9e3e905, 5); step(&d, a, g(a, b, c), x2, 0xfcefa3f8, 9)
        step(&c, d, g(d, a, b), x7, 0x676f02d9, 14); step(&b, c, g(c, d, a), x12, 0x8d2a4c8a, 20)

        step(&a, b, h(b, c, d), x5, 0xfffa3942, 4); step(&d, a, h(a, b, c), x8, 0x8771f681, 11)
        step(&c, d, h(d, a, b), x11, 0x6d9d6122, 16); step(&b, c, h(c, d, a), x14, 0xfde5380c, 23)
        step(&a, b, h(b, c, d), x1, 0xa4beea44, 4); step(&d, a, h(a, b, c), x4, 0x4bdecfa9, 11)
        step(&c, d, h(d, a, b), x7, 0xf6bb4b60, 16); step(&b, c, h(c, d, a), x10, 0xbebfbc70, 23)
        step(&a, b, h(b, c, d), x13, 0x289b7ec6, 4); step(&d, a, h(a, b, c), x0, 0xeaa127fa, 11)
        step(&c, d, h(d, a, b), x3, 0xd4ef3085, 16); step(&b, c, h(c, d, a), x6, 0x04881d05, 23)
        step(&a, b, h(b, c, d), x9, 0xd9d4d039, 4); step(&d, a, h(a, b, c), x12, 0xe6db99e5, 11)
        step(&c, d, h(d, a, b), x15, 0x1fa27cf8, 16); step(&b, c, h(c, d, a), x2, 0xc4ac5665, 23)

        step(&a, b, i(b, c, d), x0, 0xf4292244, 6); step(&d, a, i(a, b, c), x7, 0x432aff97, 10)
        step(&c, d, i(d, a, b), x14, 0xab9423a7, 15); step(&b, c, i(c, d, a), x5, 0xfc93a039, 21)
        step(&a, b, i(b, c, d), x12, 0x655b59c3, 6); step(&d, a, i(a, b, c), x3, 0x8f0ccc92, 10)
        step(&c, d, i(d, a, b), x10, 0xffeff47d, 15); step(&b, c, i(c, d, a), x1, 0x85845dd1, 21)
        step(&a, b, i(b, c, d), x8, 0x6fa87e4f, 6); step(&d, a, i(a, b, c), x15, 0xfe2ce6e0, 10)
        step(&c, d, i(d, a, b), x6, 0xa3014314, 15); step(&b, c, i(c, d, a), x13, 0x4e0811a1, 21)
        step(&a, b, i(b, c, d), x4, 0xf7537e82, 6); step(&d, a, i(a, b, c), x11, 0xbd3af235, 10)
        step(&c, d, i(d, a, b), x2, 0x2ad7d2bb, 15); step(&b, c, i(c, d, a), x9, 0xeb86d391, 21)

        return (words.0 &+ a, words.1 &+ b, words.2 &+ c, words.3 &+ d)
    }
}
