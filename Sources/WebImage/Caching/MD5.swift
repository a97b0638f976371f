import Foundation

/// MD5 (RFC 1321), for disk-cache file names as SDWebImage names them. Not for security: MD5 is
/// broken as a cryptographic hash, but it is a fine, fast, stable name for a cache key. The Linux
/// toolchain has no digest library and the package takes no dependencies.
struct MD5 {
    private var a0: UInt32 = 0x67452301
    private var b0: UInt32 = 0xefcdab89
    private var c0: UInt32 = 0x98badcfe
    private var d0: UInt32 = 0x10325476
    private var buffer = [UInt8](repeating: 0, count: 64)
    private var buffered = 0
    private var length: UInt64 = 0

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// K[i] = floor(abs(sin(i + 1)) × 2^32).
    private static let constants: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296)) }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var index = 0
        if buffered > 0 {
            let take = min(64 - buffered, bytes.count)
            for i in 0..<take { buffer[buffered + i] = bytes[i] }
            buffered += take
            index = take
            if buffered == 64 {
                buffer.withUnsafeBytes { compress($0) }
                buffered = 0
            }
        }
        while bytes.count - index >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + 64)]))
            index += 64
        }
        while index < bytes.count {
            buffer[buffered] = bytes[index]
            buffered += 1
            index += 1
        }
    }

    mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    mutating func finalize() -> [UInt8] {
        let bitLength = length &* 8
        let afterPad = (buffered + 1) % 64
        var padding: [UInt8] = [0x80] + [UInt8](repeating: 0, count: afterPad <= 56 ? 56 - afterPad : 120 - afterPad)
        for shift in stride(from: 0, to: 64, by: 8) { padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        update(padding)
        return [a0, b0, c0, d0].flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
    }

    /// The lower-case hex MD5 of `bytes`: 32 characters.
    static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var hasher = MD5()
        hasher.update(bytes)
        return hasher.finalize().hexString
    }

    private mutating func compress(_ chunk: UnsafeRawBufferPointer) {
        var m = [UInt32](repeating: 0, count: 16)
        for i in 0..<16 {
            m[i] = UInt32(chunk[4 * i]) | UInt32(chunk[4 * i + 1]) << 8 | UInt32(chunk[4 * i + 2]) << 16 | UInt32(chunk[4 * i + 3]) << 24
        }
        var a = a0, b = b0, c = c0, d = d0
        for i in 0..<64 {
            var f: UInt32
            let g: Int
            switch i {
            case 0..<16: f = (b & c) | (~b & d); g = i
            case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
            case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
            default: f = c ^ (b | ~d); g = (7 * i) % 16
            }
            f = f &+ a &+ Self.constants[i] &+ m[g]
            a = d
            d = c
            c = b
            b = b &+ ((f << Self.shifts[i]) | (f >> (32 - Self.shifts[i])))
        }
        a0 = a0 &+ a
        b0 = b0 &+ b
        c0 = c0 &+ c
        d0 = d0 &+ d
    }
}
