/// Extracts one bitfield channel from a 16- or 32-bit pixel and scales it to 8 bits as the corpus reference
/// does: an n-bit value v becomes round(v·255 / (2^n − 1)); 8-bit channels are taken as they are; a zero mask
/// gives 0. A non-contiguous mask (nonsense, but not refused) keeps the reference's arithmetic: the value is
/// the masked bits shifted down, and a result over 255 wraps modulo 256 as NumPy's cast does.
struct BMPChannelScaler: Sendable {
    let mask: UInt32
    let shift: UInt32
    let bitCount: Int
    /// The 8-bit value for every possible shifted value, when there are at most 65536 of them.
    private let table: [UInt8]

    init(mask: UInt32) {
        self.mask = mask
        shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
        bitCount = mask.nonzeroBitCount
        let largest = mask >> shift
        if mask != 0 && largest < 65536 {
            let (bits, largestValue) = (bitCount, Int(largest))
            table = (0...largestValue).map { Self.scaled(UInt32($0), bitCount: bits) }
        } else {
            table = []
        }
    }

    @inline(__always)
    func value(of pixel: UInt32) -> UInt8 {
        if mask == 0 { return 0 }
        let shifted = (pixel & mask) >> shift
        if !table.isEmpty { return table[Int(shifted)] }  // shifted ≤ mask >> shift < table.count
        return Self.scaled(shifted, bitCount: bitCount)
    }

    /// floor(v·255/m + 1/2) with m = 2^n − 1, computed exactly in integers: floor((510·v + m) / 2m).
    private static func scaled(_ shifted: UInt32, bitCount: Int) -> UInt8 {
        if bitCount == 8 { return UInt8(truncatingIfNeeded: shifted) }
        let maximum = (UInt64(1) << UInt64(bitCount)) - 1
        return UInt8(truncatingIfNeeded: (UInt64(shifted) * 510 + maximum) / (2 * maximum))
    }
}
