import Foundation
import Testing
@testable import WebImage

/// JavaScript's `Math.cos` (fdlibm, as V8 computes it) and `Math.round`, which ThumbHash's reference uses.
@Suite struct JavaScriptMathTests {
    /// Values node 20's `Math.cos` gives (bit patterns), where glibc's `cos` gives others.
    @Test func theCosineIsV8s() {
        // Argument bits → node's Math.cos bits, printed by node for ThumbHash DCT arguments.
        let cases: [(UInt64, UInt64)] = JavaScriptMathTests.nodeCosines
        #expect(!cases.isEmpty)
        var glibcDiffers = 0
        for (argument, expected) in cases {
            let x = Double(bitPattern: argument)
            #expect(JavaScriptMath.cos(x).bitPattern == expected, "cos(\(x))")
            if Foundation.cos(x).bitPattern != expected { glibcDiffers += 1 }
        }
        #expect(glibcDiffers > 0, "the cases include arguments where glibc's cosine is not the reference's")
    }

    @Test func theCosineIsACosine() {
        for step in 0...2000 {
            let x = Double(step) * 0.0125 - 5
            #expect(abs(JavaScriptMath.cos(x) - Foundation.cos(x)) <= 2 * Foundation.cos(x).ulp.magnitude + 1e-300, "cos(\(x))")
        }
        #expect(JavaScriptMath.cos(0) == 1)
        #expect(JavaScriptMath.cos(.nan).isNaN && JavaScriptMath.cos(.infinity).isNaN)
    }

    @Test func roundingTakesHalvesUp() {
        #expect(JavaScriptMath.round(2.5) == 3 && JavaScriptMath.round(-2.5) == -2 && JavaScriptMath.round(0.49999999999999994) == 0)
        #expect(JavaScriptMath.round(3.5) == 4 && JavaScriptMath.round(-0.5) == 0 && JavaScriptMath.round(1.4999) == 1)
    }
}
