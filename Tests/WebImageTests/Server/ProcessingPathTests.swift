import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's URL format as `webimage serve` takes it apart (`ProcessingPath`) and reads its options
/// (`ProcessingRequest`), and what each option asks the manager for (`VariantParameters`). The cases
/// follow imgproxy 4's parser (`options/parser/`) and its documentation.
@Suite struct ProcessingPathTests {
    func request(_ path: String, presets: [String: [String]] = [:], security: Bool = false) throws -> ProcessingRequest {
        try ProcessingRequest(path: try ProcessingPath(path: path), presets: presets, allowsSecurityOptions: security)
    }

    @Test func plainAndBase64SourcesWithTheirExtensions() throws {
        let plain = try ProcessingPath(path: "/sig/rs:fill:300:200/q:70/plain/https://example.com/a%20b.jpg@webp")
        #expect(plain.signature == "sig" && plain.signedPath == "/rs:fill:300:200/q:70/plain/https://example.com/a%20b.jpg@webp")
        #expect(plain.source.absoluteString == "https://example.com/a%20b.jpg" && plain.extensionText == "webp")
        #expect(plain.optionSegments == ["rs:fill:300:200", "q:70"])
        let query = try ProcessingPath(path: "/s/w:10/plain/https%3A%2F%2Fexample.com%2Fimg%3Fid%3D1")
        #expect(query.source.absoluteString == "https://example.com/img?id=1" && query.extensionText == nil, "an escaped query stays the source's")
        let encoded = "aHR0cHM6Ly9leGFtcGxlLmNvbS9pbWFnZS5wbmc"   // https://example.com/image.png
        let base64 = try ProcessingPath(path: "/s/size:64:0:1/" + encoded.prefix(12) + "/" + encoded.dropFirst(12) + ".avif")
        #expect(base64.source.absoluteString == "https://example.com/image.png" && base64.extensionText == "avif")
        #expect(try ProcessingPath(path: "/s/" + encoded + "==").source.absoluteString == "https://example.com/image.png", "padding is allowed")
    }

    /// imgproxy repairs what proxies do to URLs, and signs the repaired path.
    @Test func pathsAreRepairedAsImgproxyRepairsThem() throws {
        let escaped = try ProcessingPath(path: "/s/rs%3Afill%3A10%3A20/plain/http://h/x.png")
        #expect(escaped.optionSegments == ["rs:fill:10:20"] && escaped.signedPath == "/rs:fill:10:20/plain/http://h/x.png")
        let collapsed = try ProcessingPath(path: "/s/w:5/plain/https:/h/x.png")
        #expect(collapsed.source.absoluteString == "https://h/x.png" && collapsed.signedPath == "/w:5/plain/https://h/x.png")
        let noOptions = try ProcessingPath(path: "/s//plain/http://h/x.png")
        #expect(noOptions.optionSegments.isEmpty && noOptions.signedPath == "/plain/http://h/x.png")
        #expect(try ProcessingPath(path: "/unsafe/plain/http://h/x.png").optionSegments.isEmpty)
        #expect(throws: ProcessingPath.Invalid.self, "lowercase %3a is not repaired") { try ProcessingPath(path: "/s/rs%3afill/plain/http://h/x") }
    }

    @Test func aCollapsedSchemeIsFoundAsImgproxysPatternFindsIt() {
        func repaired(_ url: String) -> String? { ProcessingPath.collapsedScheme(in: url).map { "\($0.0)://\($0.1)" } }
        #expect(repaired("http:/h/x") == "http://h/x")
        #expect(repaired("http://h/x") == nil, "already whole")
        #expect(repaired("https:/h/a:/b") == "https:/h/a://b", "greedy: the last :/ of the leading run, as imgproxy's pattern")
        #expect(repaired("http:/h x:/y") == "http://h x:/y", "not past white space")
        #expect(repaired(":/h") == nil && repaired("a:/") == nil && repaired("") == nil)
    }

    @Test func everyGeometryOptionAndItsShortName() throws {
        let long = try request("/s/resize:force:10:20:true/width:30/height:40/enlarge:1/quality:90/format:jpg/blur:2.5/"
                               + "resizing_type:fit/min-width:5/min-height:6/zoom:1.5:2/dpr:2/gravity:nowe:3:4/crop:50:60:so/"
                               + "padding:1:2:3:4/rotate:270/flip:1:0/background:ff8000/sharpen:0.5/pixelate:4/"
                               + "extend:1:ea/extend_aspect_ratio:1:no/trim:10:fff:1:0/plain/http://h/x")
        var expected = ProcessingOptions()
        expected.resizingType = .fit
        (expected.width, expected.height, expected.enlarge) = (30, 40, true)
        (expected.minWidth, expected.minHeight, expected.zoomX, expected.zoomY, expected.devicePixelRatio) = (5, 6, 1.5, 2, 2)
        expected.gravity = Gravity(.northWest, x: 3, y: 4)
        expected.crop = ProcessingOptions.Crop(width: 50, height: 60, gravity: Gravity(.south))
        expected.padding = ProcessingOptions.Padding(top: 1, right: 2, bottom: 3, left: 4)
        (expected.rotation, expected.flipsHorizontally, expected.flipsVertically) = (270, true, false)
        expected.background = PixelColor(red: 255, green: 128, blue: 0)
        (expected.blurSigma, expected.sharpenSigma, expected.pixelateSize) = (2.5, 0.5, 4)
        expected.extend = ProcessingOptions.Extension(gravity: Gravity(.east))
        expected.extendAspectRatio = ProcessingOptions.Extension(gravity: Gravity(.north))
        expected.trim = ProcessingOptions.Trim(threshold: 10, color: PixelColor(red: 255, green: 255, blue: 255), equalHorizontal: true)
        #expect(long.processing == expected)
        #expect(long.quality == 90 && long.format == .jpeg)
        let short = try request("/s/rs:fill-down:1:2/s:3:4/mw:5/mh:6/z:2/el:t/ex:1/exar:1/g:sm/c:0.5/pd:7/rot:-90/fl::1/bg:1:2:3/"
                                + "sh:1/pix:2/bl:0/t:5/plain/http://h/x")
        #expect(short.processing.resizingType == .fillDown && short.processing.width == 3 && short.processing.height == 4)
        #expect(short.processing.zoomX == 2 && short.processing.zoomY == 2 && short.processing.enlarge)
        #expect(short.processing.gravity == Gravity(.smart) && short.processing.crop == ProcessingOptions.Crop(width: 0.5, height: 0))
        #expect(short.processing.padding == ProcessingOptions.Padding(top: 7, right: 7, bottom: 7, left: 7), "one value pads every side")
        #expect(short.processing.rotation == 270 && !short.processing.flipsHorizontally && short.processing.flipsVertically)
        #expect(short.processing.background == PixelColor(red: 1, green: 2, blue: 3) && short.processing.blurSigma == 0)
        #expect(short.processing.trim?.threshold == 5 && short.processing.trim?.color == nil)
    }

    /// imgproxy's rules for repeated and partial options: the last wins, but only for what it sets.
    @Test func laterOptionsOverwriteOnlyWhatTheySet() throws {
        #expect(try request("/s/s:100:200/s::300/plain/http://h/x").processing.height == 300)
        #expect(try request("/s/s:100:200/s::300/plain/http://h/x").processing.width == 100)
        let gravity = try request("/s/g:ce:10:20/g:no/plain/http://h/x").processing.gravity
        #expect(gravity == Gravity(.north, x: 10, y: 20), "offsets survive a gravity without them")
        #expect(try request("/s/g:ce:10:20/g:sm/plain/http://h/x").processing.gravity == Gravity(.smart), "sm clears them")
        #expect(try request("/s/pd:10:20/plain/http://h/x").processing.padding == ProcessingOptions.Padding(top: 10, right: 20, bottom: 10, left: 20))
        #expect(try request("/s/el:yes/plain/http://h/x").processing.enlarge == false, "an unknown boolean is false, as imgproxy reads it")
        #expect(try request("/s/f:png/plain/http://h/x@webp").format == .webp, "the extension wins over format")
        #expect(try request("/s/w:100/rs:fit:200/plain/http://h/x").processing.width == 200)
        #expect(try request("/s/t:10/t:/plain/http://h/x").processing.trim == nil, "an empty threshold turns trim off")
    }

    @Test func outputAndRequestOptions() throws {
        let output = try request("/s/fq:webp:50:avif:40/mb:1000/scp:0/kcr:1/cb:v2/exp:4102444800/fn:cat:0/att:1/plain/http://h/x")
        #expect(output.formatQuality == [.webp: 50, .avif: 40] && output.maxBytes == 1000)
        #expect(!output.stripsColorProfile && output.keepsCopyright && output.expires == 4_102_444_800)
        #expect(output.filename == "cat" && output.returnsAttachment)
        #expect(output.quality(for: .webp) == 50 && output.quality(for: .jpeg) == 80)
        #expect(try request("/s/fn:Y2F0LnBuZw:1/plain/http://h/x").filename == "cat.png", "an encoded filename")
        #expect(try request("/s/q:55/fq:webp:50/plain/http://h/x").quality(for: .webp) == 55, "quality beats format_quality")
        let defaults = try request("/s/plain/http://h/x")
        #expect(defaults.quality(for: .jpeg) == 80 && defaults.quality(for: .webp) == 79 && defaults.quality(for: .avif) == 63,
                "imgproxy 4's default qualities")
        #expect(throws: ProcessingRequest.Expired.self) { try request("/s/exp:1000/plain/http://h/x") }
        #expect(try request("/s/exp:0/plain/http://h/x").expires == 0, "0 never expires")
        let raw = try request("/s/raw:1/plain/http://h/x@nonsense")
        #expect(raw.raw && raw.format == nil, "raw: the extension is not even read, as imgproxy")
        #expect(try request("/s/skp:png:jpg/skp:heic/plain/http://h/x").skipProcessing == [.png, .jpeg, .heic, .heif], "skp accumulates")
    }

    @Test func watermarkPlacements() throws {
        let placed = try request("/s/wm:0.5:soea:10:20:0.25/plain/http://h/x").processing.watermark
        #expect(placed == ProcessingOptions.Watermark(opacity: 0.5, position: Gravity(.southEast, x: 10, y: 20), scale: 0.25))
        let tiled = try request("/s/watermark:1:re:5/plain/http://h/x").processing.watermark
        #expect(tiled == ProcessingOptions.Watermark(opacity: 1, position: Gravity(.center, x: 5), replicates: true))
        #expect(try request("/s/wm:0.3:no:1:2:0.5:x:y/plain/http://h/x").processing.watermark?.opacity == 0.3,
                "the two paid-edition arguments are read past, as imgproxy's open-source parser does")
    }

    @Test func contentDispositionIsImgproxys() throws {
        func disposition(_ options: String, _ source: String, _ format: ImageFormat) throws -> String {
            let path = try ProcessingPath(path: "/s/\(options)/plain/\(source)")
            return ImageRequestHandler.contentDisposition(for: try ProcessingRequest(path: path), source: path.source, format: format)
        }
        #expect(try disposition("w:1", "http://h/dir/cat.png", .webp) == "inline; filename=\"cat.webp\"")
        #expect(try disposition("w:1", "http://h/a.jpg%3Fv%3D1.2", .jpeg) == "inline; filename=\"a.jpg?v=1.jpg\"",
                "the query is part of the name, cut at its last dot, as imgproxy cuts it")
        #expect(try disposition("fn:my%22file/att:1", "http://h/x.png", .png) == "attachment; filename=\"my%22file.png\"")
        #expect(try disposition("w:1", "http://h/", .avif) == "inline; filename=\"image.avif\"")
    }

    @Test func presetsExpandWhereTheyAppearAfterTheDefaultPreset() throws {
        let presets = ["default": ["q:60"], "thumb": ["rs:fill:100:100", "g:sm"], "big": ["w:1000", "pr:thumb"], "loop": ["pr:loop"]]
        let thumb = try request("/s/pr:thumb/w:50/plain/http://h/x", presets: presets)
        #expect(thumb.quality == 60 && thumb.processing.resizingType == .fill && thumb.processing.width == 50)
        #expect(thumb.processing.gravity == Gravity(.smart))
        #expect(try request("/s/preset:big/plain/http://h/x", presets: presets).processing.width == 100, "a preset inside a preset")
        #expect(throws: ProcessingPath.Invalid.self, "a loop is refused") { try request("/s/pr:loop/plain/http://h/x", presets: presets) }
        #expect(throws: ProcessingPath.Invalid.self, "an unknown preset") { try request("/s/pr:nope/plain/http://h/x", presets: presets) }
    }

    @Test func securityOptionsNeedTheServersPermission() throws {
        #expect(throws: ProcessingRequest.Forbidden.self) { try request("/s/mrd:100/plain/http://h/x") }
        #expect(try request("/s/mrd:100/plain/http://h/x", security: true).processing.maxResultDimension == 100)
        #expect(try request("/s/msr:2.5/plain/http://h/x", security: true).maxSourcePixels == 2_500_000)
    }

    @Test(arguments: [
        "/s/unknown:1/plain/http://h/x",        // an unknown option
        "/s/min_width:10/plain/http://h/x",     // imgproxy spells it min-width
        "/s/rs:sideways:1:1/plain/http://h/x",  // an unknown resizing type
        "/s/w:-1/plain/http://h/x", "/s/w:abc/plain/http://h/x", "/s/q:101/plain/http://h/x", "/s/w:1:2/plain/http://h/x",
        "/s/bl:-3/plain/http://h/x", "/s/wi:nonsense=1/plain/http://h/x",
        "/s/dpr:0/plain/http://h/x", "/s/dpr:1000/plain/http://h/x", "/s/z:0/plain/http://h/x", "/s/dpr:nan/plain/http://h/x",
        "/s/w:100000/plain/http://h/x", "/s/pd:99999/plain/http://h/x", "/s/bl:1e9/plain/http://h/x",
        "/s/g:sm:1:1/plain/http://h/x", "/s/g:fp:0.5/plain/http://h/x", "/s/g:fp:2:0/plain/http://h/x", "/s/ex:1:sm/plain/http://h/x",
        "/s/rot:45/plain/http://h/x", "/s/bg:12/plain/http://h/x", "/s/bg:1:2/plain/http://h/x", "/s/bg:300:0:0/plain/http://h/x",
        "/s/fq:webp/plain/http://h/x", "/s/aq:fast/plain/http://h/x", "/s/aq:size/plain/http://h/x", "/s/aq:dssim::90:80/plain/http://h/x",
        "/s/aq:dssim:-1/plain/http://h/x", "/s/aq:dssim:0.02:0/plain/http://h/x", "/s/aq:dssim:0.02:70:80:2/plain/http://h/x", "/s/aq:1:2:3:4:5:6/plain/http://h/x", "/s/f:tga/plain/http://h/x", "/s/wm:0.5:ce:0:0:0/plain/http://h/x", "/s/wm:2/plain/http://h/x", "/s/wm:0.5:sm/plain/http://h/x",
        "/s/skp:/plain/http://h/x", "/s/skp:png:nope/plain/http://h/x", "/s/sm:0/plain/http://h/x", "/s/ph:2:3/plain/http://h/x",
        "/s/w:1/plain/ftp://h/x", "/s/w:1/plain/http://h/x@psd", "/s/w:1/plain/http://user@h/x.png", "/s/w:1/!!!.png",
        "/s/fit/300/300/aHR0cDovL2gveA", "/s", "/", "",
    ])
    func whatItCannotHonourIsAnErrorNamingIt(_ path: String) {
        #expect(throws: (any Error).self) { try request(path) }
    }

    @Test func theManagerIsAskedForWhatTheOptionsMean() throws {
        func parameters(_ options: String, accept: String? = nil, negotiates: Bool = false) throws -> VariantParameters {
            VariantParameters(request: try request("/s/\(options)/plain/http://h/x.jpg"), accept: accept, formats: FormatPolicy(negotiates: negotiates, coders: ServerFixture.coders))
        }
        let fit = try parameters("rs:fit:100:50")
        #expect(fit.context.thumbnailPixelSize == PixelSize(width: 100, height: 50), "fit: decoded small")
        #expect(fit.context.transformer?.key == "Processing(rs:fit:100:50)")
        #expect(fit.format == .preferred([.jpeg, .png, .gif]) && !fit.variesByAccept, "no format named: imgproxy's preferred formats")
        #expect(try parameters("w:100/dpr:2").context.thumbnailPixelSize == PixelSize(width: 200, height: VariantParameters.unbounded))
        #expect(try parameters("w:100/rot:90").context.thumbnailPixelSize == PixelSize(width: VariantParameters.unbounded, height: 100))
        let fill = try parameters("rs:fill:100:50/dpr:2")
        #expect(fill.context.thumbnailPixelSize == PixelSize(width: 200, height: 100) && fill.context.thumbnailCoversBox,
                "fill: decoded as small as covers the box")
        #expect(try parameters("rs:fill:100:0").context.thumbnailCoversBox == false, "one side: a fit")
        #expect(!fit.context.thumbnailCoversBox)
        #expect(try parameters("rs:fill:100:50/dpr:0.5").context.thumbnailPixelSize == nil, "a ratio under 1: the whole image")
        #expect(try parameters("rs:fit:100:50/c:10").context.thumbnailPixelSize == nil, "a crop is in source pixels")
        // The format is decided once, by the manager: every format's quality and effort are handed on.
        let defaults = try parameters("w:1").encoding
        #expect(defaults.resolved(for: .jpeg).compressionQuality == 0.8, "imgproxy's default quality")
        #expect(defaults.resolved(for: .webp).compressionQuality == 0.79 && defaults.resolved(for: .avif).compressionQuality == 0.63)
        #expect(defaults.resolved(for: .avif).compressionEffort == 0.1, "imgproxy's AVIF speed, 9: libavif speed 10 - 0.1 x 10")
        #expect(defaults.resolved(for: .webp).compressionEffort == 4.0 / 6, "imgproxy's WebP effort, 4: method 4 of 6")
        #expect(!defaults.isProgressive, "imgproxy's JPEGs are baseline by default")
        let named = try parameters("q:55/f:webp").encoding
        #expect(named.resolved(for: .webp).compressionQuality == 0.55 && named.resolved(for: .avif).compressionQuality == 0.55,
                "quality beats every per-format default")
        #expect(try parameters("fq:webp:40").encoding.resolved(for: .webp).compressionQuality == 0.4)
        #expect(try parameters("w:1", accept: "image/webp").format == .preferred([.jpeg, .png, .gif]), "Accept is ignored unless the server negotiates")
        let negotiated = try parameters("w:1", accept: "image/webp", negotiates: true)
        #expect(negotiated.format == .exactly(.webp) && negotiated.variesByAccept)
        let notAccepted = try parameters("w:1", accept: "image/png", negotiates: true)
        #expect(notAccepted.format == .preferred([.jpeg, .png, .gif]) && notAccepted.variesByAccept, "another client could get WebP: Vary")
        #expect(try parameters("w:1/f:avif").format == .exactly(.avif))
        let kept = try parameters("scp:0/kcr:1/mb:5000")
        #expect(kept.options.contains(.preserveColorProfile) && kept.options.contains(.preserveCopyright) && kept.encoding.maxFileSize == 5000)
        #expect(try parameters("q:50").context.transformer == nil, "options that change no pixel: no transformer")
    }
}
