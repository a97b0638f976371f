/// Comparisons whose time does not depend on where two secrets differ, so a client timing its
/// answers cannot guess a signature or a secret byte by byte.
package enum ConstantTime {
    /// Whether `given` equals `expected`: every byte of `expected` is looked at whatever differs
    /// (only the length, which is not secret, shows).
    package static func equals(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        var difference = UInt8(expected.count == given.count ? 0 : 1)
        for index in 0..<expected.count { difference |= expected[index] ^ (index < given.count ? given[index] : 0) }
        return difference == 0
    }
}
