import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
@testable import WebImageServer

/// imgproxy's URL format as `webimage serve` reads it, and what each option asks the manager for.
@Suite struct ProcessingPathTests {
    @Test func plainAndBase64SourcesWithTheirExtensions() throws {
        let plain = try ProcessingPath(path: "/sig/rs:fill:300:200/q:70/plain/https://example.com/a%20b.jpg@webp")
        #expect(plain.signature == "sig" && plain.signedPath == "/rs:fill:300:200/q:70/plain/https://example.com/a%20b.jpg@webp")
        #expect(plain.source.absoluteString == "https://example.com/a%20b.jpg" && plain.format == .webp)
        #expect(plain.resizingType == .fill && plain.width == 300 && plain.height == 200 && plain.quality == 70)
        let query = try ProcessingPath(path: "/s/w:10/plain/https%3A%2F%2Fexample.com%2Fimg%3Fid%3D1")
        #expect(query.source.absoluteString == "https://example.com/img?id=1" && query.format == nil, "an escaped query stays the source's")
        let encoded = "aHR0cHM6Ly9leGFtcGxlLmNvbS9pbWFnZS5wbmc"   // https://example.com/image.png
        let base64 = try ProcessingPath(path: "/s/size:64:0:1/" + encoded.prefix(12) + "/" + encoded.dropFirst(12) + ".avif")
        #expect(base64.source.absoluteString == "https://example.com/image.png" && base64.format == .avif)
        #expect(base64.width == 64 && base64.height == 0 && base64.enlarge)
        #expect(try ProcessingPath(path: "/s/f:png/plain/http://h/x.jpg").format == .png)
        #expect(try ProcessingPath(path: "/s/w:5/plain/http://h/x.jpg@best").format == nil, "best: automatic")
    }

    @Test func everyOptionAndItsShortName() throws {
        let long = try ProcessingPath(path: "/s/resize:force:10:20:true/width:30/height:40/enlarge:1/quality:90/format:jpg/blur:2.5/"
                                      + "auto_rotate:1/resizing_type:fit/plain/http://h/x")
        #expect(long.resizingType == .fit && long.width == 30 && long.height == 40 && long.enlarge && long.quality == 90)
        #expect(long.format == .jpeg && long.blurSigma == 2.5)
        let short = try ProcessingPath(path: "/s/rs:auto:1:2/w:3/h:4/el:t/q:0/ext:gif/bl:0/ar:true/rt:fill-down/wi:round=4/plain/http://h/x")
        #expect(short.resizingType == .fillDown && short.width == 3 && short.height == 4 && short.quality == nil && short.blurSigma == nil)
        #expect(short.format == .gif && short.transformerText == "round=4")
    }

    @Test(arguments: [
        "/s/unknown:1/plain/http://h/x",        // an unknown option
        "/s/rs:sideways:1:1/plain/http://h/x",  // an unknown resizing type
        "/s/w:-1/plain/http://h/x", "/s/w:abc/plain/http://h/x", "/s/q:101/plain/http://h/x",
        "/s/el:maybe/plain/http://h/x", "/s/rs:fit:1:1:0:1/plain/http://h/x",   // extend
        "/s/ar:0/plain/http://h/x", "/s/bl:-3/plain/http://h/x", "/s/wi:nonsense=1/plain/http://h/x",
        "/s/w:1/plain/ftp://h/x", "/s/w:1/plain/http://h/x@bmp", "/s/w:1/!!!.png", "/s", "/", "",
    ])
    func whatItCannotHonourIsAnError(_ path: String) {
        #expect(throws: ProcessingPath.Invalid.self) { try ProcessingPath(path: path) }
    }

    @Test func theManagerIsAskedForWhatTheOptionsMean() throws {
        func parameters(_ options: String, accept: String? = nil) throws -> VariantParameters {
            VariantParameters(path: try ProcessingPath(path: "/s/\(options)/plain/http://h/x.jpg"), accept: accept)
        }
        let fit = try parameters("rs:fit:100:50")
        #expect(fit.context.thumbnailPixelSize == PixelSize(width: 100, height: 50) && fit.context.transformer == nil,
                "fit: decoded small, never enlarged")
        #expect(fit.encoding.compressionQuality == 0.8, "imgproxy's default quality")
        #expect(try parameters("w:100").context.thumbnailPixelSize == PixelSize(width: 100, height: VariantParameters.unbounded))
        #expect(try parameters("rs:fill:100:50").context.transformer?.key == ResizingTransformer(size: PixelSize(width: 100, height: 50),
                                                                                                   scaleMode: .aspectFill).key)
        #expect(try parameters("rs:force:100:50").context.transformer?.key == ResizingTransformer(size: PixelSize(width: 100, height: 50),
                                                                                                    scaleMode: .fill).key)
        let enlarged = try parameters("rs:fit:100:50:1/bl:3/q:55")
        #expect(enlarged.context.transformer?.key == PipelineTransformer([ResizingTransformer(size: PixelSize(width: 100, height: 50),
                                                                                              scaleMode: .aspectFit),
                                                                          BlurTransformer(radius: 3)]).key)
        #expect(enlarged.encoding.compressionQuality == 0.55)
        #expect(try parameters("w:1", accept: "image/webp").format == .automatic(accept: "image/webp"))
        #expect(try parameters("w:1/f:avif").format == .exactly(.avif))
        #expect(try parameters("w:1/f:avif").encoding.compressionEffort == VariantParameters.avifEffort, "imgproxy's AVIF speed")
        #expect(try parameters("w:1/f:webp").encoding.compressionEffort == nil, "WebP keeps its own default method")
        let withAVIF = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), AVIFCoder()])
        let path = try ProcessingPath(path: "/s/w:1/plain/http://h/x.jpg")
        #expect(VariantParameters(path: path, accept: "image/avif,*/*", coders: withAVIF).encoding.compressionEffort == VariantParameters.avifEffort,
                "an Accept header that picks AVIF gets the same speed")
        #expect(VariantParameters(path: path, accept: "image/avif,*/*", coders: CoderRegistry(coders: [JPEGCoder()])).encoding.compressionEffort
                == nil, "no AVIF coder: no AVIF, no AVIF speed")
    }
}
