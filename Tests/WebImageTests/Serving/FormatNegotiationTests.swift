import Testing
@testable import WebImage
import WebImageAVIF
import WebImageWebP

/// The automatic output format: AVIF, then WebP, when the client lists them and a coder can write
/// them; else the source's family.
@Suite struct FormatNegotiationTests {
    static let everything = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), GIFCoder(), WebPCoder(), AVIFCoder()])
    static let core = CoderRegistry()

    struct Case: Sendable, CustomTestStringConvertible {
        var accept: String?
        var animated = false
        var alpha = false
        var coders: CoderRegistry = FormatNegotiationTests.everything
        var expected: ImageFormat
        var testDescription: String { "\(accept ?? "nil") animated:\(animated) alpha:\(alpha) → \(expected)" }
    }

    static let cases: [Case] = [
        Case(accept: "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", expected: .avif),   // Chrome
        Case(accept: "image/webp,*/*", expected: .webp),                                                     // Firefox before AVIF
        Case(accept: "image/avif;q=0, image/webp", expected: .webp),                                         // q=0 refuses
        Case(accept: "IMAGE/AVIF", expected: .avif),                                                         // case-insensitive
        Case(accept: "image/*,*/*;q=0.8", expected: .jpeg),                                                  // wildcards do not count
        Case(accept: "*/*", alpha: true, expected: .png),
        Case(accept: nil, animated: true, expected: .gif),
        Case(accept: "", animated: true, alpha: true, expected: .gif),
        Case(accept: "image/avif,image/webp", animated: true, expected: .avif),
        Case(accept: "image/avif,image/webp", coders: FormatNegotiationTests.core, expected: .jpeg),        // no coder, no choice
        Case(accept: "image/avif,image/webp", alpha: true, coders: FormatNegotiationTests.core, expected: .png),
    ]

    @Test(arguments: cases) func theChoiceFollowsTheAcceptHeaderTheCodersAndTheSource(_ test: Case) {
        #expect(ImageFormat.negotiated(accept: test.accept, isAnimated: test.animated, hasAlpha: test.alpha, coders: test.coders) == test.expected)
    }

    @Test func theFamilyOfASource() {
        #expect(ImageFormat.family(ofAnimated: false, hasAlpha: false) == .jpeg)
        #expect(ImageFormat.family(ofAnimated: false, hasAlpha: true) == .png)
        #expect(ImageFormat.family(ofAnimated: true, hasAlpha: false) == .gif)
    }
}
