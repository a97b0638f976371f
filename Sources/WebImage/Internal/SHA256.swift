/// SHA-256 (FIPS 180-4), for pixel fingerprints and (package-wide) the image server's URL signatures. The toolchain on Linux ships no digest library and
/// the package takes no dependencies.
package struct SHA256 {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
    )
    private var buffer = DigestBlockBuffer()

    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var state = self.state
        buffer.append(bytes) { block in state = Self.compress(block, state: state) }
        self.state = state
    }

    package mutating func update<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        let array = Array(bytes)
        array.withUnsafeBytes { update($0) }
    }

    package mutating func finalize() -> [UInt8] {
        var state = self.state
        buffer.finish(bigEndianLength: true) { block in state = Self.compress(block, state: state) }
        let words = [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7]
        return words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32($0))) } }
    }

    static func hex<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize().hexString
    }

    private typealias State = (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    private static func compress(_ chunk: UnsafeRawBufferPointer, state: State) -> State {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { compress(chunk, state: state, schedule: $0) }
    }

    private static func compress(
        _ chunk: UnsafeRawBufferPointer, state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32),
        schedule w: UnsafeMutableBufferPointer<UInt32>
    ) -> (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) {
        for i in 0..<16 {
            w[i] = UInt32(chunk[4 * i]) << 24 | UInt32(chunk[4 * i + 1]) << 16 | UInt32(chunk[4 * i + 2]) << 8 | UInt32(chunk[4 * i + 3])
        }
        for i in 16..<64 {
            let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
            let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = state
        k.withUnsafeBufferPointer { k in
            for i in 0..<64 {
                let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                let choice = (e & f) ^ (~e & g)
                let t1 = h &+ s1 &+ choice &+ k[i] &+ w[i]
                let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let t2 = s0 &+ majority
                (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
        }
        return (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h)
    }
}

extension UInt32 {
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 - count)) }
}

extension Sequence<UInt8> {
    /// Lower-case hexadecimal, two digits a byte.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
