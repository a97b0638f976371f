import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer
import WebImageSVG

/// The formats imgproxy reads and writes beyond the first six, seen over HTTP: TIFF, JPEG XL, BMP and ICO sources,
/// every writable format asked for by extension or `f:`, and JPEG XL picked from `Accept`.
@Suite struct FormatServingTests {
    func fixture(_ configure: @escaping (inout ImageServerConfig) -> Void = { _ in }) async throws -> ServerFixture {
        let fixture = try await ServerFixture(configure: configure)
        let photo = try Image(width: 40, height: 20, pixelFormat: .rgb8, pixels: (0..<2400).map { UInt8(truncatingIfNeeded: $0 * 3) })
        for format in [ImageFormat.jpeg, .tiff, .jxl, .bmp, .ico] {
            fixture.sources.route("/photo.\(format.fileExtension!)",
                                  TestResponse(headers: [("Content-Type", format.mimeType)], body: try ServerFixture.coders.encode(photo, as: format)))
        }
        let tiff = try ServerFixture.coders.encode(photo, as: .tiff)
        fixture.sources.route("/cut.tiff", TestResponse(headers: [("Content-Type", "image/tiff")], body: tiff.prefix(tiff.count / 2)))
        return fixture
    }

    @Test func tiffAndJPEGXLSourcesAreServedAsThePreferredFormats() async throws {
        let fixture = try await fixture()
        // An icon is written with alpha (32-bit), so it comes back as PNG: the first preferred format that holds alpha.
        for (name, mime) in [("photo.tiff", "image/jpeg"), ("photo.jxl", "image/jpeg"), ("photo.bmp", "image/jpeg"), ("photo.ico", "image/png")] {
            let reply = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/" + name))")
            #expect(reply.status == 200 && reply.header("Content-Type") == mime, "\(name): \(reply.status)")
            #expect(try ServerFixture.coders.decode(reply.body).size == PixelSize(width: 20, height: 10), "\(name)")
        }
        let cut = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/cut.tiff"))")
        #expect(cut.status == 422, "a truncated TIFF: \(cut.status)")
        await fixture.stop()
    }

    @Test func everyWritableFormatIsAnsweredWhenAsked() async throws {
        let fixture = try await fixture()
        let source = fixture.source("/photo.jpg")
        for (asked, mime) in [("tiff", "image/tiff"), ("tif", "image/tiff"), ("jxl", "image/jxl"), ("heic", "image/heic"),
                              ("bmp", "image/bmp"), ("ico", "image/x-icon")] {
            for path in ["/insecure/w:20/plain/\(source)@\(asked)", "/insecure/w:20/f:\(asked)/plain/\(source)"] {
                let reply = try await fixture.get(path)
                #expect(reply.status == 200 && reply.header("Content-Type") == mime, "\(path): \(reply.status)")
                #expect(ImageFormat(sniffing: reply.body).mimeType == mime, "\(path)")
                #expect(try ServerFixture.coders.decode(reply.body).width == 20, "\(path)")
            }
        }
        let named = try await fixture.get("/insecure/w:20/plain/\(source)@jxl")
        #expect(named.header("Content-Disposition")?.contains(".jxl") == true)
        await fixture.stop()
    }

    @Test func jpegXLIsPickedFromAcceptFirstWhenTheServerOffersIt() async throws {
        let accept = "image/jxl,image/avif,image/webp,*/*"
        let auto = try await fixture { $0.autoFormats = [.jxl, .avif, .webp] }
        let chosen = try await auto.get("/insecure/w:20/plain/\(auto.source("/photo.jpg"))", headers: ["Accept": accept])
        #expect(chosen.header("Content-Type") == "image/jxl" && chosen.header("Vary") == "Accept", "JPEG XL before AVIF, as imgproxy")
        let noJXL = try await auto.get("/insecure/w:20/plain/\(auto.source("/photo.jpg"))", headers: ["Accept": "image/avif,image/webp"])
        #expect(noJXL.header("Content-Type") == "image/avif")
        await auto.stop()
        let avifOnly = try await fixture { $0.autoFormats = [.avif] }
        let avif = try await avifOnly.get("/insecure/w:20/plain/\(avifOnly.source("/photo.jpg"))", headers: ["Accept": accept])
        #expect(avif.header("Content-Type") == "image/avif", "without AUTO_JXL, JPEG XL is not picked")
        await avifOnly.stop()
        let enforcing = try await fixture { $0.enforcedFormats = [.jxl] }
        let enforced = try await enforcing.get("/insecure/w:20/plain/\(enforcing.source("/photo.jpg"))@png", headers: ["Accept": accept])
        #expect(enforced.header("Content-Type") == "image/jxl", "ENFORCE_JXL beats the named format")
        await enforcing.stop()
    }
}

extension FormatServingTests {
    /// `/info` reads the new formats' headers: the source's own size and format, not the small decode's.
    @Test func infoReportsTheNewFormatsSizes() async throws {
        let fixture = try await fixture()
        for (name, format) in [("photo.tiff", "tiff"), ("photo.jxl", "jxl"), ("photo.bmp", "bmp"), ("photo.ico", "ico")] {
            let reply = try await fixture.get("/info/insecure/plain/\(fixture.source("/" + name))")
            let facts = try #require(try JSONSerialization.jsonObject(with: reply.body) as? [String: Any], "\(name)")
            #expect(reply.status == 200 && facts["width"] as? Int == 40 && facts["height"] as? Int == 20, "\(name): \(facts)")
            #expect(facts["format"] as? String == format, "\(name)")
        }
        await fixture.stop()
    }
}

extension FormatServingTests {
    /// An SVG source is sanitised and rendered at the asked size (a vector: no upscaling blur), answered in a
    /// raster format; a hostile one is a 422 and the server goes on.
    @Test func svgSourcesAreRenderedAtTheAskedSize() async throws {
        let fixture = try await fixture()
        let shape = try SVGCoderTests.fixture("simple-shape.svg")
        fixture.sources.route("/shape.svg", TestResponse(headers: [("Content-Type", "image/svg+xml")], body: shape))
        fixture.sources.route("/laughs.svg", TestResponse(headers: [("Content-Type", "image/svg+xml")],
                                                          body: try SVGCoderTests.fixture("billion-laughs.svg")))
        let reply = try await fixture.get("/insecure/w:400/el:1/plain/\(fixture.source("/shape.svg"))@png")
        #expect(reply.status == 200 && reply.header("Content-Type") == "image/png", "\(reply.status)")
        let image = try ServerFixture.coders.decode(reply.body)
        #expect(image.size == PixelSize(width: 400, height: 200) && SVGCoderTests.pixel(image, 300, 100) == [0, 0, 255, 128])
        let bomb = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/laughs.svg"))")
        #expect(bomb.status == 422, "\(bomb.status)")
        #expect(try await fixture.get("/health").status == 200)
        await fixture.stop()
    }
}

/// imgproxy's SVG rules (`shouldSkipStandardProcessing`, its `TestAlwaysRasterizeSvg*` cases): an SVG source
/// whose URL names no format, or names `svg`, is answered as its sanitised document whatever else is asked;
/// `IMGPROXY_ALWAYS_RASTERIZE_SVG` renders it unless `skip_processing` lists `svg`; a raster source asked for
/// as SVG is 422. Every image answer carries imgproxy's `Content-Security-Policy`.
extension FormatServingTests {
    static let svgTypes = "image/svg+xml"

    func svgFixture(coders: CoderRegistry = ServerFixture.coders,
                    _ configure: @escaping (inout ImageServerConfig) -> Void = { _ in }) async throws -> ServerFixture {
        let fixture = try await ServerFixture(coders: coders, configure: configure)
        for name in ["unsafe.svg", "simple-shape.svg"] {
            fixture.sources.route("/" + name, TestResponse(headers: [("Content-Type", Self.svgTypes)], body: try SVGCoderTests.fixture(name)))
        }
        let photo = try Image(width: 40, height: 20, pixelFormat: .rgb8, pixels: [UInt8](repeating: 90, count: 2400))
        fixture.sources.route("/photo.png", TestResponse(headers: [("Content-Type", "image/png")], body: try ServerFixture.coders.encode(photo, as: .png)))
        return fixture
    }

    /// Whether `body` is an SVG document with nothing of `unsafe.svg`'s scripts, handlers and external references left.
    static func isSanitised(_ body: Data) -> Bool {
        let text = String(decoding: body, as: UTF8.self)
        return ImageFormat(sniffing: body) == .svg && text.contains("keep-rect")
            && !["<script", "onload", "onclick", "foreignObject", "javascript:", "evil.example", "tracker.example", "/etc/passwd"]
                .contains { text.contains($0) }
    }

    @Test func anSVGSourceNamingNoFormatIsPassedThroughSanitised() async throws {
        let fixture = try await svgFixture { $0.enforcedFormats = [.webp]; $0.autoFormats = [.avif] }
        let accept = ["Accept": "image/avif,image/webp,*/*"]
        for path in ["/insecure/rs:fill:40:40/plain/\(fixture.source("/unsafe.svg"))", "/insecure/plain/\(fixture.source("/unsafe.svg"))@svg",
                     "/insecure/w:20/f:svg/plain/\(fixture.source("/unsafe.svg"))"] {
            let reply = try await fixture.get(path, headers: accept)
            #expect(reply.status == 200 && reply.header("Content-Type") == Self.svgTypes, "\(path): \(reply.status) \(reply.header("Content-Type") ?? "")")
            #expect(Self.isSanitised(reply.body), "\(path): \(String(decoding: reply.body, as: UTF8.self))")
            #expect(reply.header("Content-Security-Policy") == "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
            #expect(reply.header("Content-Disposition") == "inline; filename=\"unsafe.svg\"")
            let again = try await fixture.get(path, headers: accept)
            #expect(again.body == reply.body && again.header("ETag") == reply.header("ETag"), "the warm answer is the same document")
        }
        let raster = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/simple-shape.svg"))@png", headers: accept)
        #expect(raster.status == 200 && raster.header("Content-Type") == "image/webp", "a raster format named is rendered (WebP enforced)")
        let jpeg = try await fixture.get("/insecure/rs:fill:4:4/plain/\(fixture.source("/simple-shape.svg"))@jpg")
        #expect(jpeg.status == 200 && ImageFormat(sniffing: jpeg.body) == .jpeg, "imgproxy's TestNotSkipProcessingSVGToJPG")
        let photo = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/photo.png"))@svg")
        #expect(photo.status == 422, "a raster source cannot be written as SVG: \(photo.status)")
        #expect(photo.header("Content-Security-Policy") == nil)
        let photoAnswer = try await fixture.get("/insecure/w:20/plain/\(fixture.source("/photo.png"))")
        #expect(photoAnswer.status == 200 && photoAnswer.header("Content-Security-Policy") != nil, "every image answer carries the policy")
        await fixture.stop()
    }

    @Test func alwaysRasterizeSVGRendersUnlessSkipProcessingListsSVG() async throws {
        let fixture = try await svgFixture { $0.alwaysRasterizesSVG = true }
        let filled = try await fixture.get("/insecure/rs:fill:40:40/plain/\(fixture.source("/simple-shape.svg"))")
        #expect(filled.status == 200 && filled.header("Content-Type") == "image/png", "\(filled.status)")
        #expect(try ServerFixture.coders.decode(filled.body).size == PixelSize(width: 40, height: 40))
        let named = try await fixture.get("/insecure/plain/\(fixture.source("/unsafe.svg"))@svg")
        #expect(named.header("Content-Type") == Self.svgTypes && Self.isSanitised(named.body), "svg named still passes")
        for path in ["/insecure/skp:svg/plain/\(fixture.source("/unsafe.svg"))@svg", "/insecure/skp:svg/plain/\(fixture.source("/unsafe.svg"))"] {
            let skipped = try await fixture.get(path)
            #expect(skipped.status == 200 && skipped.header("Content-Type") == Self.svgTypes, "\(path)")
            #expect(Self.isSanitised(skipped.body), "a skipped SVG is sanitised too: \(path)")
        }
        await fixture.stop()
        let enforcing = try await svgFixture { $0.alwaysRasterizesSVG = true; $0.enforcedFormats = [.webp] }
        let webp = try await enforcing.get("/insecure/plain/\(enforcing.source("/simple-shape.svg"))", headers: ["Accept": "image/webp"])
        #expect(webp.status == 200 && webp.header("Content-Type") == "image/webp", "\(webp.status)")
        await enforcing.stop()
    }

    @Test func sanitizeSVGOffPassesTheSourceAsItIs() async throws {
        let coders = CoderRegistry(coders: ServerFixture.coders.coders)
        coders.remove(SVGCoder.self)
        coders.add(SVGCoder(sanitizesPassthrough: false))
        let fixture = try await svgFixture(coders: coders)
        let reply = try await fixture.get("/insecure/plain/\(fixture.source("/unsafe.svg"))")
        let source = try SVGCoderTests.fixture("unsafe.svg")
        #expect(reply.status == 200 && reply.body == source, "\(reply.status)")
        #expect(reply.header("Content-Security-Policy")?.contains("sandbox") == true, "the policy still stops its scripts")
        await fixture.stop()
    }
}
