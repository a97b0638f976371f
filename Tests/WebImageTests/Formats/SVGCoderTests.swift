import Foundation
import Testing
@testable import WebImage
@testable import WebImageSVG

@Suite struct SVGCoderTests {
    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: Corpus.packageRoot.appendingPathComponent("Tests/WebImageTests/Fixtures/svg/\(name)"))
    }

    /// The pixel at (x, y) as RGBA.
    static func pixel(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        image.withUnsafeRow(y) { row in Array(row[(x * 4)..<(x * 4 + 4)]) }
    }

    @Test func aShapeIsRenderedAtItsSizeOrAtTheSizeAsked() async throws {
        let data = try Self.fixture("simple-shape.svg")
        let (own, large) = try await offThePool {
            (try SVGCoder().decode(data), try SVGCoder().decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 400, height: 400))))
        }
        #expect(own.size == PixelSize(width: 40, height: 20) && own.format == .svg && own.pixelFormat == .rgba8)
        #expect(Self.pixel(own, 5, 10) == [255, 0, 0, 255], "opaque red")
        #expect(Self.pixel(own, 30, 10) == [0, 0, 255, 128], "half-transparent blue, straight alpha")
        #expect(large.size == PixelSize(width: 400, height: 200), "a vector is drawn at the asked size, not scaled up")
        #expect(Self.pixel(large, 50, 100) == [255, 0, 0, 255] && Self.pixel(large, 300, 100) == [0, 0, 255, 128])
    }

    @Test func scriptsHandlersForeignObjectsAndExternalReferencesAreRemoved() throws {
        let clean = String(decoding: try SVGCoder.sanitize(try Self.fixture("unsafe.svg")), as: UTF8.self)
        for gone in ["<script", "onload", "onclick", "foreignObject", "javascript", "evil.example", "tracker.example", "/etc/passwd"] {
            #expect(!clean.contains(gone), "\(gone) is still there:\n\(clean)")
        }
        #expect(clean.contains("keep-rect") && clean.contains("https://example.com/"), "the rest is kept")
    }

    /// A registry hands an SVG source on as its sanitised document (or as it is, when told not to sanitise),
    /// and nothing else: a raster source has no passthrough.
    @Test func aRegistryPassesSVGSourcesThroughAndNothingElse() throws {
        let registry = CoderRegistry(coders: [PNGCoder(), SVGCoder()])
        let unsafe = try Self.fixture("unsafe.svg")
        #expect(registry.canPassThrough(.svg) && !registry.canPassThrough(.png) && !CoderRegistry(coders: [PNGCoder()]).canPassThrough(.svg))
        #expect(try registry.passthroughDocument(for: unsafe) == SVGCoder.sanitize(unsafe))
        #expect(try registry.passthroughDocument(for: try encodedPicture()) == nil)
        #expect(try SVGCoder(sanitizesPassthrough: false).passthroughDocument(unsafe) == unsafe)
        #expect(throws: ImageCodingError.self) { try registry.passthroughDocument(for: try Self.fixture("billion-laughs.svg")) }
    }

    @Test func entityBombsAbsurdSizesAndBrokenFilesAreTypedErrors() async throws {
        #expect(throws: ImageCodingError.self, "billion laughs: no entity is ever expanded") {
            try SVGCoder().decode(try Self.fixture("billion-laughs.svg"))
        }
        let huge = Data(#"<svg xmlns="http://www.w3.org/2000/svg" width="1000000" height="1000000"><rect width="10" height="10"/></svg>"#.utf8)
        #expect(throws: ImageCodingError.imageTooLarge(width: 1_000_000, height: 1_000_000, limit: DecodeOptions.defaultPixelCountLimit)) {
            try SVGCoder().decode(huge)
        }
        let small = try await offThePool { try SVGCoder().decode(huge, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 100, height: 100))) }
        #expect(small.size == PixelSize(width: 100, height: 100), "the asked size, never the file's")
        #expect(throws: ImageCodingError.self) { try SVGCoder().decode(Data("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect".utf8)) }
        #expect(throws: ImageCodingError.unsupportedFormat(.png)) { try SVGCoder().decode(try encodedPicture()) }
        #expect(throws: ImageCodingError.self, "no rasteriser") {
            try SVGCoder(rasterizer: "/nonexistent/rsvg-convert").decode(try Self.fixture("simple-shape.svg"))
        }
    }

    @Test func aRenderThatOutlivesItsTimeIsKilled() async throws {
        // Many blurred layers: more work than a millisecond allows.
        let layers = (0..<200).map { "<rect x=\"\($0)\" width=\"300\" height=\"300\" filter=\"url(#b)\"/>" }.joined()
        let heavy = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"2000\" height=\"2000\"><filter id=\"b\">"
                          + "<feGaussianBlur stdDeviation=\"40\"/></filter>" + layers + "</svg>").utf8)
        let outcome = try await offThePool { Result { try SVGCoder(timeout: .milliseconds(1)).decode(heavy) } }
        guard case .failure(let error) = outcome else { Issue.record("rendered within 1 ms"); return }
        #expect((error as? ImageCodingError).map { "\($0)".contains("longer than") } == true, "\(error)")
    }

    /// A renderer that exits without reading its input (here `/bin/true`) fails the write with EPIPE, never
    /// SIGPIPE for the whole process, and the answer is a typed error.
    @Test func aRendererThatLeavesEarlyIsATypedError() async throws {
        let rects = String(repeating: "<rect width=\"1\" height=\"1\"/>", count: 40_000)
        let big = Data(("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">" + rects + "</svg>").utf8)
        #expect(big.count > 1 << 20)
        let outcome = try await offThePool { Result { try SVGCoder(rasterizer: "/bin/true").decode(big) } }
        guard case .failure(let error) = outcome else { Issue.record("an empty answer was taken for an image"); return }
        #expect(error is ImageCodingError, "\(error)")
        // A renderer that refuses says why on its standard error, and the error carries it (`ls` refuses the options).
        let refusal = try await offThePool { Result { try SVGCoder(rasterizer: "/bin/ls").decode(try Self.fixture("simple-shape.svg")) } }
        guard case .failure(ImageCodingError.corruptData(_, let reason)) = refusal else { Issue.record("\(refusal)"); return }
        #expect(reason.contains("ls"), "\(reason)")
    }
}
