import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's URL settings (`options/parser/processing_options_test.go`, the cases that set its
/// configuration), ported: a base URL, source replacements, another arguments separator, base64
/// sources with a file name, presets only, allowed options. Then the same through the server.
@Suite struct URLParsingTests {
    static func base64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    func request(_ path: String, _ parsing: URLParsing, presets: [String: [String]] = [:]) throws -> (ProcessingRequest, URL) {
        let parsed = try ProcessingPath(path: "/unsafe" + path, parsing: parsing)
        return (try ProcessingRequest(path: parsed, presets: presets, parsing: parsing), parsed.source)
    }

    @Test func base64SourcesWithAFileNameABaseAndReplacements() throws {
        let origin = "http://images.dev/lorem/ipsum.jpg?param=value"
        var parsing = URLParsing()
        parsing.base64IncludesFilename = true
        let (named, source) = try request("/size:100:100/\(Self.base64(origin)).png/puppy.jpg", parsing)
        #expect(source.absoluteString == origin && named.format == .png, "TestParseBase64URLWithFilename")

        parsing = URLParsing()
        parsing.baseURL = "http://images.dev/"
        let (based, relative) = try request("/size:100:100/\(Self.base64("lorem/ipsum.jpg?param=value")).png", parsing)
        #expect(relative.absoluteString == "http://images.dev/lorem/ipsum.jpg?param=value" && based.format == .png, "TestParseBase64URLWithBase")
        let (_, plainBased) = try request("/size:100:100/plain/lorem/ipsum.jpg@png", parsing)
        #expect(plainBased.absoluteString == "http://images.dev/lorem/ipsum.jpg", "TestParsePlainURLWithBase")
        let (_, escaped) = try request("/size:100:100/plain/lorem%2Fipsum.jpg%3Fparam%3Dvalue@png", parsing)
        #expect(escaped.absoluteString == "http://images.dev/lorem/ipsum.jpg?param=value", "TestParsePlainURLEscapedWithBase")
        let (_, already) = try request("/size:100:100/plain/http://images.dev/x.jpg", parsing)
        #expect(already.absoluteString == "http://images.dev/x.jpg", "a URL already under the base is left alone")

        parsing = URLParsing()
        parsing.replacements = [URLParsing.Replacement(pattern: WildcardPattern("test://*/"), replacement: "test2://images.dev/${1}/dolor/"),
                                URLParsing.Replacement(pattern: WildcardPattern("test2://"), replacement: "http://")]
        let (_, replaced) = try request("/size:100:100/\(Self.base64("test://lorem/ipsum.jpg?param=value")).png", parsing)
        #expect(replaced.absoluteString == "http://images.dev/lorem/dolor/ipsum.jpg?param=value", "TestParseBase64URLWithReplacement")
        let (_, plainReplaced) = try request("/size:100:100/plain/test://lorem/ipsum.jpg@png", parsing)
        #expect(plainReplaced.absoluteString == "http://images.dev/lorem/dolor/ipsum.jpg", "TestParsePlainURLWithReplacement")
    }

    @Test func anotherArgumentsSeparator() throws {
        var parsing = URLParsing()
        parsing.argumentsSeparator = ","
        let (parsed, _) = try request("/size,100,100,1/plain/http://images.dev/lorem/ipsum.jpg", parsing)
        #expect(parsed.processing.width == 100 && parsed.processing.height == 100 && parsed.processing.enlarge, "TestParseWithArgumentsSeparator")
        #expect(throws: ProcessingPath.Invalid.self, "a colon is no separator now: the segment is read as a base64 source") {
            _ = try request("/size:100:100/plain/http://images.dev/lorem/ipsum.jpg", parsing)
        }
    }

    @Test func onlyPresets() throws {
        var parsing = URLParsing()
        parsing.onlyPresets = true
        let presets = ["test1": ["blur:0.2"], "test2": ["quality:50"]]
        let origin = "http://images.dev/lorem/ipsum.jpg"
        let (plain, source) = try request("/test1:test2/plain/\(origin)@png", parsing, presets: presets)
        #expect(plain.processing.blurSigma == 0.2 && plain.quality == 50 && plain.format == .png && source.absoluteString == origin,
                "TestParsePathOnlyPresets")
        let withQuery = origin + "?param=value"
        let (encoded, encodedSource) = try request("/test1:test2/\(Self.base64(withQuery)).png", parsing, presets: presets)
        #expect(encoded.processing.blurSigma == 0.2 && encoded.quality == 50 && encoded.format == .png
                && encodedSource.absoluteString == withQuery, "TestParseBase64URLOnlyPresets")
        #expect(throws: ProcessingPath.Invalid.self, "an unknown preset") { _ = try request("/nope/plain/\(origin)", parsing, presets: presets) }
    }

    @Test func allowedOptions() throws {
        var parsing = URLParsing()
        parsing.allowedProcessingOptions = ["w", "h", "pr"]
        let presets = ["test1": ["blur:0.2"]]
        let source = Self.base64("http://images.dev/lorem/ipsum.jpg?param=value")
        for (options, refused) in [("w:100/h:200", false), ("w:100/h:200/blur:10", true), ("w:100/h:200/pr:test1", false),
                                   ("w:100/h:200/pr:test1/blur:10", true)] {
            if refused {
                #expect(throws: ProcessingRequest.Forbidden.self, "TestParseAllowedOptions \(options)") {
                    _ = try request("/\(options)/\(source).png", parsing, presets: presets)
                }
            } else {
                #expect(throws: Never.self, "TestParseAllowedOptions \(options)") { _ = try request("/\(options)/\(source).png", parsing, presets: presets) }
            }
        }
    }

    /// The star's rules: greedy, never across a `/`, captures numbered from 1.
    @Test func wildcardPatterns() {
        let pattern = WildcardPattern("https://*.example.com/*/")
        let match = pattern.prefixMatch(in: "https://a.b.example.com/img/x.png")
        #expect(match?.length == "https://a.b.example.com/img/".count && match?.captures == ["a.b", "img"])
        #expect(pattern.prefixMatch(in: "https://evil.com/x.example.com/img/") == nil)
        #expect(URLParsing.substituting(["one", "two"], into: "a/${2}/$1/${3}/$x/${1") == "a/two/one//$x/${1")
    }

    /// The settings through the server: a base URL and `,`-separated presets only, as a client sees them.
    @Test func theServerReadsItsURLsAsConfigured() async throws {
        let fixture = try await ServerFixture { config in
            config.presets = ["small": ["rs,fit,32,32"], "png": ["f,png"]]
            config.urlParsing.argumentsSeparator = ","
            config.urlParsing.onlyPresets = true
        }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")],
                                                         body: try encodedPicture(width: 200, height: 100, as: .jpeg)))
        let reply = try await fixture.get("/insecure/small,png/plain/\(fixture.source("/photo.jpg"))")
        #expect(reply.status == 200 && reply.header("Content-Type") == "image/png")
        #expect(try ServerFixture.coders.decode(reply.body).size == PixelSize(width: 32, height: 16))
        #expect(try await fixture.get("/insecure/rs,fit,10,10/plain/\(fixture.source("/photo.jpg"))").status == 400,
                "only presets: rs is no preset")
        await fixture.stop()

        let origin = try TestHTTPServer()
        defer { origin.stop() }
        origin.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: try encodedPicture(width: 200, height: 100, as: .jpeg)))
        let base = origin.url("/").absoluteString
        let relative = try await ServerFixture { config in
            config.urlParsing.baseURL = base
            config.urlParsing.replacements = [URLParsing.Replacement(pattern: WildcardPattern("img://*/"), replacement: base + "${1}.jpg?from=img")]
            config.urlParsing.allowedProcessingOptions = ["w"]
        }
        let relativeReply = try await relative.get("/insecure/w:20/plain/photo.jpg@png")
        #expect(try relativeReply.status == 200 && ServerFixture.coders.decode(relativeReply.body).size.width == 20)
        #expect(origin.requestCount(for: "/photo.jpg") == 1)
        let replaced = try await relative.get("/insecure/w:30/plain/img://photo/@png")
        #expect(try replaced.status == 200 && ServerFixture.coders.decode(replaced.body).size.width == 30, "img://photo/ rewritten to the origin")
        #expect(origin.requestCount(for: "/photo.jpg") == 2, "the rewritten URL (with its query) is another source")
        #expect(try await relative.get("/insecure/w:30/bl:2/plain/photo.jpg@png").status == 403, "blur is not an allowed option")
        await relative.stop()
    }
}
