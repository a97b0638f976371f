import Foundation

/// JavaScript's `Math.cos` and `Math.round` as the reference ThumbHash encoder (evanw's, in
/// JavaScript) computes them, so the same pixels give the same bytes here.
///
/// V8 (node, Chrome) computes `Math.cos` with fdlibm's algorithm: argument reduction by π/2 in
/// two or three parts (`__ieee754_rem_pio2`, the medium range — ThumbHash's arguments are below
/// 8π), then a degree-12 polynomial for the cosine and a degree-13 one for the sine. glibc's `cos`
/// is correctly rounded instead, and differs from it in the last bit for a few per cent of
/// ThumbHash's arguments; a last bit is enough to move a coefficient across a quantisation step.
/// Written here from fdlibm's published algorithm and constants (Sun's freely distributable
/// fdlibm 5.3).
enum JavaScriptMath {
    /// `Math.round`: the nearest integer, halves towards +∞.
    static func round(_ value: Double) -> Double {
        let floor = value.rounded(.down)
        return value - floor >= 0.5 ? floor + 1 : floor
    }

    /// `Math.cos`, for finite arguments up to 2¹⁹·π/2 (larger ones, never met here, fall back to the platform's).
    static func cos(_ x: Double) -> Double {
        let high = Int32(truncatingIfNeeded: Int64(bitPattern: x.bitPattern) >> 32)
        let ix = high & 0x7FFF_FFFF
        if ix <= 0x3FE9_21FB { return kernelCos(x, 0) }
        guard x.isFinite, ix <= 0x4139_21FB else { return Foundation.cos(x) }
        let (n, y0, y1) = remainderPiOver2(x, high: high, ix: ix)
        switch n & 3 {
        case 0: return kernelCos(y0, y1)
        case 1: return -kernelSin(y0, y1)
        case 2: return -kernelCos(y0, y1)
        default: return kernelSin(y0, y1)
        }
    }

    private static func highWord(_ x: Double) -> Int32 {
        Int32(truncatingIfNeeded: Int64(bitPattern: x.bitPattern) >> 32)
    }

    /// `x` with its low word cleared and its high word replaced.
    private static func withHighWord(_ high: Int32) -> Double {
        Double(bitPattern: UInt64(UInt32(bitPattern: high)) << 32)
    }

    /// cos(x + y) for |x| ≤ π/4, y the tail of x.
    private static func kernelCos(_ x: Double, _ y: Double) -> Double {
        let c1 = 4.16666666666666019037e-02, c2 = -1.38888888888741095749e-03, c3 = 2.48015872894767294178e-05
        let c4 = -2.75573143513906633035e-07, c5 = 2.08757232129817482790e-09, c6 = -1.13596475577881948265e-11
        let ix = highWord(x) & 0x7FFF_FFFF
        if ix < 0x3E40_0000, Int(x) == 0 { return 1 }
        let z = x * x
        let r = z * (c1 + z * (c2 + z * (c3 + z * (c4 + z * (c5 + z * c6)))))
        if ix < 0x3FD3_3333 { return 1 - (0.5 * z - (z * r - x * y)) }
        let qx = ix > 0x3FE9_0000 ? 0.28125 : withHighWord(ix - 0x0020_0000)
        let hz = 0.5 * z - qx
        let a = 1 - qx
        return a - (hz - (z * r - x * y))
    }

    /// sin(x + y) for |x| ≤ π/4, y the tail of x (fdlibm's `__kernel_sin` with `iy` = 1).
    private static func kernelSin(_ x: Double, _ y: Double) -> Double {
        let s1 = -1.66666666666666324348e-01, s2 = 8.33333333332248946124e-03, s3 = -1.98412698298579493134e-04
        let s4 = 2.75573137070700676789e-06, s5 = -2.50507602534068634195e-08, s6 = 1.58969099521155010221e-10
        let ix = highWord(x) & 0x7FFF_FFFF
        if ix < 0x3E40_0000, Int(x) == 0 { return x }
        let z = x * x
        let v = z * x
        let r = s2 + z * (s3 + z * (s4 + z * (s5 + z * s6)))
        return x - ((z * (0.5 * y - v * r) - y) - v * s1)
    }

    /// The high words of n·π/2 for n = 1…32: where the quick reduction may cancel.
    private static let multiplesOfPiOver2HighWords: [Int32] = [
        0x3FF9_21FB, 0x4009_21FB, 0x4012_D97C, 0x4019_21FB, 0x401F_6A7A, 0x4022_D97C, 0x4025_FDBB, 0x4029_21FB,
        0x402C_463A, 0x402F_6A7A, 0x4031_475C, 0x4032_D97C, 0x4034_6B9C, 0x4035_FDBB, 0x4037_8FDB, 0x4039_21FB,
        0x403A_B41B, 0x403C_463A, 0x403D_D85A, 0x403F_6A7A, 0x4040_7E4C, 0x4041_475C, 0x4042_106C, 0x4042_D97C,
        0x4043_A28C, 0x4044_6B9C, 0x4045_34AC, 0x4045_FDBB, 0x4046_C6CB, 0x4047_8FDB, 0x4048_58EB, 0x4049_21FB,
    ]

    /// x − n·π/2 as a head and tail, and n: fdlibm's reduction for π/4 < |x| ≤ 2¹⁹·π/2.
    private static func remainderPiOver2(_ x: Double, high hx: Int32, ix: Int32) -> (Int, Double, Double) {
        let invpio2 = 6.36619772367581382433e-01
        let pio2_1 = 1.57079632673412561417e+00, pio2_1t = 6.07710050650619224932e-11
        let pio2_2 = 6.07710050630396597660e-11, pio2_2t = 2.02226624879595063154e-21
        let pio2_3 = 2.02226624871116645580e-21, pio2_3t = 8.47842766036889956997e-32
        if ix < 0x4002_D97C {   // |x| < 3π/4: n = ±1
            var z: Double
            let y0: Double, y1: Double
            if hx > 0 {
                z = x - pio2_1
                if ix != 0x3FF9_21FB {
                    y0 = z - pio2_1t
                    y1 = (z - y0) - pio2_1t
                } else {
                    z -= pio2_2
                    y0 = z - pio2_2t
                    y1 = (z - y0) - pio2_2t
                }
                return (1, y0, y1)
            }
            z = x + pio2_1
            if ix != 0x3FF9_21FB {
                y0 = z + pio2_1t
                y1 = (z - y0) + pio2_1t
            } else {
                z += pio2_2
                y0 = z + pio2_2t
                y1 = (z - y0) + pio2_2t
            }
            return (-1, y0, y1)
        }
        let t = Swift.abs(x)
        let n = Int(t * invpio2 + 0.5)
        let fn = Double(n)
        var r = t - fn * pio2_1
        var w = fn * pio2_1t
        var y0: Double
        if n < 32 && ix != multiplesOfPiOver2HighWords[n - 1] {
            y0 = r - w
        } else {
            let j = ix >> 20
            y0 = r - w
            var i = j - ((highWord(y0) >> 20) & 0x7FF)
            if i > 16 {
                var t2 = r
                w = fn * pio2_2
                r = t2 - w
                w = fn * pio2_2t - ((t2 - r) - w)
                y0 = r - w
                i = j - ((highWord(y0) >> 20) & 0x7FF)
                if i > 49 {
                    t2 = r
                    w = fn * pio2_3
                    r = t2 - w
                    w = fn * pio2_3t - ((t2 - r) - w)
                    y0 = r - w
                }
            }
        }
        let y1 = (r - y0) - w
        return hx < 0 ? (-n, -y0, -y1) : (n, y0, y1)
    }
}
