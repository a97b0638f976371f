import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// Every processing option the parser knows reaches the variant's cache key: a URL with the option
/// is cached apart from the same URL without it, unless the option cannot change the bytes (then
/// the table says why). The option names are read from the parser itself, so an option added there
/// without a row here fails the test: one cannot be left out of the key silently.
@Suite struct OptionCacheKeyTests {
    /// Each option's names and an argument that changes the answer; `nil`: it changes no byte (why).
    static let options: [(names: [String], argument: String?, why: String)] = [
        (["resize", "rs"], "fill:50:50", ""), (["size", "s"], "50:50", ""), (["resizing_type", "rt"], "fill", ""),
        (["width", "w"], "60", ""), (["height", "h"], "60", ""), (["min-width", "mw"], "150", ""), (["min-height", "mh"], "150", ""),
        (["zoom", "z"], "2", ""), (["dpr"], "2", ""), (["enlarge", "el"], "1", ""), (["extend", "ex"], "1", ""),
        (["extend_aspect_ratio", "extend_ar", "exar"], "1", ""), (["gravity", "g"], "no", ""), (["crop", "c"], "50:50", ""),
        (["trim", "t"], "10", ""), (["padding", "pd"], "5", ""), (["auto_rotate", "ar"], "0", ""), (["rotate", "rot"], "90", ""),
        (["flip", "fl"], "1:0", ""), (["background", "bg"], "255:0:0", ""), (["blur", "bl"], "2", ""), (["sharpen", "sh"], "2", ""),
        (["pixelate", "pix"], "5", ""), (["watermark", "wm"], "0.5:ce", ""), (["keep_copyright", "kcr"], "0", ""),
        (["strip_color_profile", "scp"], "0", ""), (["quality", "q"], "50", ""), (["format_quality", "fq"], "jpeg:50", ""),
        (["max_bytes", "mb"], "5000", ""), (["format", "f", "ext"], "best", ""), (["preset", "pr"], "blurred", ""),
        (["max_src_resolution", "msr"], "0.5", ""), (["max_src_file_size", "msfs"], "100000", ""), (["max_animation_frames", "maf"], "2", ""),
        (["max_animation_frame_resolution", "mafr"], "1", ""), (["max_result_dimension", "mrd"], "50", ""), (["webimage", "wi"], "blur=2", ""),
        (["preserve_hdr", "ph"], "1", ""), (["autoquality", "aq"], "dssim:0.01", ""),
        (["strip_metadata", "sm"], nil, "only 1, the default, is accepted"),
        (["enforce_thumbnail", "eth"], nil, "only 0, the default, is accepted"),
        (["skip_processing", "skp"], nil, "decides whether a variant is made at all (the source's bytes are answered)"),
        (["raw"], nil, "the source's bytes are answered, no variant"),
        (["cachebuster", "cb"], nil, "changes the URL only, as imgproxy"),
        (["expires", "exp"], nil, "Cache-Control and a 404 once past, not the bytes"),
        (["filename", "fn"], nil, "Content-Disposition only"),
        (["return_attachment", "att"], nil, "Content-Disposition only"),
    ]

    /// The option names in the parser's `apply`, read from its source.
    static func parserOptionNames() throws -> Set<String> {
        let source = try String(contentsOf: Corpus.packageRoot.appendingPathComponent("Sources/WebImageServer/ProcessingRequest.swift"), encoding: .utf8)
        let start = try #require(source.range(of: "private mutating func apply(")), end = try #require(source.range(of: "private mutating func applySize("))
        var names = Set<String>()
        var inCase = false
        for line in source[start.upperBound..<end.lowerBound].split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("case \"") { inCase = true }
            guard inCase else { continue }
            for match in trimmed.matches(of: try Regex(#""([a-z_\-]+)""#)) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
            if trimmed.contains(":") && !trimmed.hasSuffix(",") { inCase = false }   // the case's labels end at its colon
        }
        return names
    }

    /// The variant cache key a path's options make, as the server asks the manager for them.
    static func key(_ options: String, manager: WebImageManager) throws -> String {
        let path = try ProcessingPath(path: "/s/\(options)/plain/http://h/x.jpg")
        let request = try ProcessingRequest(path: path, presets: ["blurred": ["bl:3"]], allowsSecurityOptions: true)
        let parameters = VariantParameters(request: request, accept: nil, formats: FormatPolicy(coders: ServerFixture.coders))
        let image = try #require(manager.cacheKey(for: path.source, context: parameters.context, options: parameters.options))
        let choice = WebImageManager.formatChoice(parameters.format, coders: ServerFixture.coders)
        return CacheKeys.inserting(WebImageManager.variantPart(choice: choice, encoding: parameters.encoding, options: parameters.options), into: image)
    }

    @Test func everyOptionReachesTheCacheKey() throws {
        let known = Set(Self.options.flatMap(\.names))
        let parsed = try Self.parserOptionNames()
        #expect(parsed.count > 60, "the parser's option names were read: \(parsed.sorted())")
        #expect(parsed.subtracting(known).isEmpty, "options without a row here: \(parsed.subtracting(known).sorted())")
        let manager = ManagerFixture().manager
        let base = try Self.key("w:100", manager: manager)
        for row in Self.options {
            for name in row.names {
                guard let argument = row.argument else {
                    #expect(!row.why.isEmpty, "\(name): why it changes no byte")
                    continue
                }
                let key = try Self.key("w:100/\(name):\(argument)", manager: manager)
                #expect(key != base, "\(name):\(argument) is not in the cache key")
            }
        }
    }
}
