/// BlurHash's base-83 digits: a fixed alphabet of 83 URL- and JSON-safe characters, most
/// significant digit first.
enum Base83 {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz#$%*+,-.:;=?@[]^_{|}~".utf8)

    /// The value of each ASCII byte as a digit, or -1.
    static let values: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = Int8(index) }
        return table
    }()

    /// Appends `value` as exactly `length` digits (higher digits of a larger value are dropped, as
    /// the reference encoder does).
    static func append(_ value: Int, length: Int, to text: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<max(length, 1) { divisor *= 83 }
        for _ in 0..<length {
            text.append(alphabet[(value / divisor) % 83])
            divisor /= 83
        }
    }

    /// The value of `digits`, or `nil` when one is not in the alphabet.
    static func decode(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for byte in digits {
            let digit = values[Int(byte)]
            guard digit >= 0 else { return nil }
            value = value * 83 + Int(digit)
        }
        return value
    }
}
