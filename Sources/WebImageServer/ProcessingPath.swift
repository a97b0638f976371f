import Foundation
import WebImage

/// An imgproxy URL path, parsed: `/<signature>/<options>/plain/<source URL>[@<extension>]` or
/// `/<signature>/<options>/<base64url source URL>[.<extension>]` (the encoded URL may be split by
/// `/`). Options are `/`-separated, their arguments `:`-separated, each percent-decoded. An option
/// this server does not know, or a value it cannot honour, is an error (a 400), never ignored.
///
/// Supported (imgproxy's names and short forms): `resize`/`rs`, `size`/`s`, `resizing_type`/`rt`
/// (`fit`, `fill`, `fill-down`, `force`, `auto`), `width`/`w`, `height`/`h`, `enlarge`/`el`,
/// `quality`/`q`, `format`/`f`/`ext`, `blur`/`bl`, `auto_rotate`/`ar` (outputs are always upright:
/// only true), and `webimage`/`wi` with WebImage's transformer text (`resize=256x256,cover;round=16`).
struct ProcessingPath: Sendable, Equatable {
    enum ResizingType: String, Sendable {
        case fit, fill, fillDown = "fill-down", force, auto
    }

    var signature: String
    /// The path the signature signs: everything after the signature segment, from its `/`.
    var signedPath: String
    var source: URL
    var resizingType = ResizingType.fit
    var width = 0
    var height = 0
    var enlarge = false
    /// 1–100, or nil for the server's default.
    var quality: Int?
    /// The format asked for by extension or `format`; nil: automatic, from `Accept`.
    var format: ImageFormat?
    var blurSigma: Double?
    var transformerText: String?

    /// Why a path is not one this server takes (answered 400).
    struct Invalid: Error, Equatable {
        var reason: String
    }

    init(path: String) throws(Invalid) {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()   // the leading "/"
        guard let signature = segments.first, !signature.isEmpty, segments.count >= 2 else {
            throw Invalid(reason: "expected /<signature>/<options>/plain/<source URL> or /<signature>/<options>/<base64url source URL>")
        }
        self.signature = String(signature)
        signedPath = String(path.dropFirst(1 + signature.count))
        var rest = segments.dropFirst()
        var source: URL?
        self.source = URL(fileURLWithPath: "/")   // every property set before the options are applied; replaced below
        while let segment = rest.first {
            rest = rest.dropFirst()
            if segment == "plain" {
                var text = rest.joined(separator: "/")
                if let at = text.lastIndex(of: "@") {
                    try setExtension(String(text[text.index(after: at)...]))
                    text = String(text[..<at])
                }
                guard let decoded = text.removingPercentEncoding else { throw Invalid(reason: "the source URL's percent-encoding is broken") }
                source = URL(string: decoded)
                guard source != nil else { throw Invalid(reason: "the source is not a URL: \(decoded)") }
                break
            }
            if segment.contains(":") {
                try apply(option: segment)
                continue
            }
            var encoded = ([segment] + rest).joined()
            if let dot = encoded.lastIndex(of: ".") {
                try setExtension(String(encoded[encoded.index(after: dot)...]))
                encoded = String(encoded[..<dot])
            }
            guard let bytes = Self.base64URLDecoded(encoded), let text = String(data: bytes, encoding: .utf8), let url = URL(string: text) else {
                throw Invalid(reason: "the source is neither an option nor a base64url-encoded URL: \(segment.prefix(64))")
            }
            source = url
            break
        }
        guard let source, let scheme = source.scheme?.lowercased(), scheme == "http" || scheme == "https", source.host != nil else {
            throw Invalid(reason: "the source must be an http or https URL")
        }
        self.source = source
    }

    private mutating func setExtension(_ text: String) throws(Invalid) {
        guard !text.isEmpty else { return }
        format = try Self.format(named: text)
    }

    static func format(named name: String) throws(Invalid) -> ImageFormat? {
        switch name.lowercased() {
        case "jpg", "jpeg": .jpeg
        case "png": .png
        case "gif": .gif
        case "webp": .webp
        case "avif": .avif
        case "best", "auto": nil
        default: throw Invalid(reason: "unsupported output format: \(name)")
        }
    }

    private mutating func apply(option segment: Substring) throws(Invalid) {
        var parts = segment.split(separator: ":", omittingEmptySubsequences: false).map { String($0).removingPercentEncoding ?? String($0) }
        let name = parts.removeFirst()
        func integer(_ index: Int, _ what: String, range: ClosedRange<Int> = 0...16_384) throws(Invalid) -> Int? {
            guard index < parts.count, !parts[index].isEmpty else { return nil }
            guard let value = Int(parts[index]), range.contains(value) else { throw Invalid(reason: "\(name): \(what) must be a whole number in \(range)") }
            return value
        }
        func boolean(_ index: Int) throws(Invalid) -> Bool? {
            guard index < parts.count, !parts[index].isEmpty else { return nil }
            switch parts[index].lowercased() {
            case "1", "t", "true": return true
            case "0", "f", "false": return false
            default: throw Invalid(reason: "\(name): \(parts[index]) is not a boolean (1, t, true, 0, f, false)")
            }
        }
        func setResizingType(_ index: Int) throws(Invalid) {
            guard index < parts.count, !parts[index].isEmpty else { return }
            guard let type = ResizingType(rawValue: parts[index]) else { throw Invalid(reason: "unknown resizing type: \(parts[index])") }
            resizingType = type
        }
        func size(from index: Int) throws(Invalid) {
            width = try integer(index, "width") ?? width
            height = try integer(index + 1, "height") ?? height
            enlarge = try boolean(index + 2) ?? enlarge
            if try boolean(index + 3) == true { throw Invalid(reason: "\(name): extend is not supported") }
        }
        switch name {
        case "resize", "rs":
            try setResizingType(0)
            try size(from: 1)
        case "size", "s": try size(from: 0)
        case "resizing_type", "rt": try setResizingType(0)
        case "width", "w": width = try integer(0, "width") ?? width
        case "height", "h": height = try integer(0, "height") ?? height
        case "enlarge", "el": enlarge = try boolean(0) ?? enlarge
        case "quality", "q": quality = try integer(0, "quality", range: 0...100).flatMap { $0 == 0 ? nil : $0 }
        case "format", "f", "ext": format = try Self.format(named: parts.first ?? "")
        case "blur", "bl":
            guard let text = parts.first, let sigma = Double(text), sigma >= 0, sigma <= 1000 else {
                throw Invalid(reason: "blur: the sigma must be a number from 0 to 1000")
            }
            blurSigma = sigma > 0 ? sigma : nil
        case "auto_rotate", "ar":
            if try boolean(0) == false { throw Invalid(reason: "auto_rotate: outputs are always upright (auto_rotate:0 is not supported)") }
        case "webimage", "wi":
            transformerText = parts.joined(separator: ":")
            guard let text = transformerText, (try? PipelineTransformer(parsing: text)) != nil else {
                throw Invalid(reason: "webimage: not a WebImage transformer text: \(transformerText ?? "")")
            }
        default:
            throw Invalid(reason: "unknown processing option: \(name)")
        }
    }

    static func base64URLDecoded(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
