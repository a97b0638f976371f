import Foundation

/// The arithmetic of imgproxy's geometry, in one place: sizes round half away from zero; paddings,
/// offsets, focus points and centring round half to even; a length of 0 means "not set" and stays 0.
enum ProcessingNumber {
    /// Half away from zero: 12.5 → 13.
    static func round(_ value: Double) -> Double { value.rounded(.toNearestOrAwayFromZero) }

    /// Half to even: 28.5 → 28, 3.5 → 4.
    static func roundEven(_ value: Double) -> Double { value.rounded(.toNearestOrEven) }

    /// `length × factor` rounded half away from zero; 0 stays 0.
    static func scale(_ length: Int, _ factor: Double) -> Int {
        length == 0 ? 0 : clampedInt(round(Double(length) * factor))
    }

    /// `length × factor` rounded half to even; 0 stays 0.
    static func scaleEven(_ length: Int, _ factor: Double) -> Int {
        length == 0 ? 0 : clampedInt(roundEven(Double(length) * factor))
    }

    /// `b` when `a` is 0, `a` when `b` is 0, else the smaller.
    static func minNonZero(_ a: Int, _ b: Int) -> Int {
        a == 0 ? b : b == 0 ? a : min(a, b)
    }

    /// A double as an `Int`, clamped to ±2^52 (so absurd inputs saturate instead of trapping).
    static func clampedInt(_ value: Double) -> Int {
        guard value.isFinite else { return value > 0 ? 1 << 52 : value < 0 ? -(1 << 52) : 0 }
        return Int(min(max(value, -4_503_599_627_370_496), 4_503_599_627_370_496))
    }

    /// A number as keys and URLs write it: `10`, `0.5`, `1.25` (no trailing zeros, no exponent).
    static func text(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        var text = String(format: "%.6f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text
    }
}
