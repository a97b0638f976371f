import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// The public URL builder and signer: imgproxy's published signing example, and URLs that the server
/// reads back as the options they were built from (random options, both source encodings).
@Suite struct ProcessingURLBuilderTests {
    @Test func theSignatureIsImgproxysDocumentedExample() throws {
        // imgproxy-docs, signing_url.mdx: key "secret", salt "hello".
        let signer = try ProcessingURLSigner(keyHex: "736563726574", saltHex: "68656C6C6F")
        let path = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
        #expect(signer.signature(of: path) == "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8")
        #expect(signer.isValid("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8", for: path))
        #expect(!signer.isValid("oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH9", for: path))
        #expect(throws: ProcessingURLSigner.InvalidKey.self) { try ProcessingURLSigner(keyHex: "", saltHex: "00") }
    }

    static func randomOptions(_ random: inout SplitMix) -> ProcessingOptions {
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        var options = ProcessingOptions()
        options.resizingType = pick(ProcessingOptions.ResizingType.allCases)
        options.width = pick([0, 1, 64, 300, 2048])
        options.height = pick([0, 1, 50, 400])
        options.enlarge = pick([false, true])
        options.devicePixelRatio = pick([1, 1.5, 2, 3])
        options.minWidth = pick([0, 0, 10])
        (options.zoomX, options.zoomY) = pick([(1, 1), (2, 0.5), (1.25, 1.25)])
        options.gravity = pick([Gravity.center, Gravity(.smart), Gravity(.focusPoint, x: 0.25, y: 0.75), Gravity(.southWest, x: 5, y: 0.1)])
        options.extend = pick([nil, ProcessingOptions.Extension(), ProcessingOptions.Extension(gravity: Gravity(.north, x: 3, y: 0))])
        options.extendAspectRatio = pick([nil, ProcessingOptions.Extension(gravity: Gravity(.east))])
        options.crop = pick([nil, ProcessingOptions.Crop(width: 0.5, height: 100), ProcessingOptions.Crop(width: 10, height: 0, gravity: Gravity(.smart))])
        options.trim = pick([nil, ProcessingOptions.Trim(threshold: 10), ProcessingOptions.Trim(threshold: 2.5, color: PixelColor(red: 1, green: 2, blue: 3),
                                                                                                  equalHorizontal: true)])
        options.padding = pick([ProcessingOptions.Padding(), ProcessingOptions.Padding(top: 1, right: 2, bottom: 3, left: 4)])
        options.autoRotate = pick([true, false])
        options.rotation = pick([0, 90, 180, 270])
        (options.flipsHorizontally, options.flipsVertically) = pick([(false, false), (true, false), (true, true)])
        options.background = pick([nil, PixelColor(red: 255, green: 16, blue: 0)])
        options.blurSigma = pick([0, 0.5, 3])
        options.sharpenSigma = pick([0, 1.5])
        options.pixelateSize = pick([1, 8])
        options.watermark = pick([nil, ProcessingOptions.Watermark(opacity: 0.5, position: Gravity(.northEast, x: 10, y: 20), scale: 0.25),
                                  ProcessingOptions.Watermark(opacity: 1, position: Gravity(.center, x: 4, y: 0), replicates: true)])
        return options
    }

    @Test func theServerReadsABuiltURLBackAsItsOptions() throws {
        let signer = try ProcessingURLSigner(keyHex: "00ff", saltHex: "abcd")
        let builder = ProcessingURLBuilder(base: URL(string: "https://img.example.com/prefix/")!, signer: signer)
        let source = URL(string: "https://example.com/photos/a b+c.jpg?size=large&v=1#x")!
        var random = SplitMix(seed: 26)
        for round in 0..<300 {
            let options = Self.randomOptions(&random)
            let format: ImageFormat? = [nil, .webp, .jpeg, .avif][round % 4]
            for encoding in [ProcessingURLBuilder.SourceEncoding.base64, .plain] {
                let path = builder.path(for: source, options: options, format: format, quality: round % 3 == 0 ? 70 : nil, encoding: encoding)
                let parsed = try ProcessingPath(path: path)
                #expect(signer.isValid(parsed.signature, for: parsed.signedPath), "\(path)")
                #expect(parsed.source == source, "\(path)")
                let request = try ProcessingRequest(path: parsed)
                #expect(request.processing == options, "\(path)")
                #expect(request.format == format && request.quality == (round % 3 == 0 ? 70 : nil), "\(path)")
            }
        }
        let url = builder.url(for: source, options: ProcessingOptions(), format: .png)
        #expect(url.absoluteString.hasPrefix("https://img.example.com/prefix/") && url.absoluteString.hasSuffix(".png"))
        #expect(ProcessingURLBuilder(base: URL(string: "http://h")!).path(for: source).hasPrefix("/insecure/"))
    }
}
