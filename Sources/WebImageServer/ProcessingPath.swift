import Foundation
import WebImage

/// An imgproxy URL path taken apart the way imgproxy takes it apart, before any option is read:
/// `/<signature>/<options>/plain/<source URL>[@<extension>]` or
/// `/<signature>/<options>/<base64url source URL>[.<extension>]` (the encoded URL may be split by
/// `/`). The path is first repaired as imgproxy repairs what proxies do to it: `%3A` in the options
/// becomes `:`, a scheme collapsed to `http:/` regains its slash, an empty options segment goes.
/// The signature signs that repaired path (``signedPath``), so it can be checked before any option
/// is parsed (``ProcessingRequest`` parses them).
struct ProcessingPath: Sendable, Equatable {
    var signature: String
    /// What the signature signs: the repaired path after the signature segment, from its `/`.
    var signedPath: String
    /// The option segments, in order (`rs:fill:300:200`, `g:sm`...).
    var optionSegments: [String]
    /// The source, decoded.
    var source: URL
    /// The extension's text (`png` of `@png` or `.png`), `nil` without one; read as a format by
    /// ``ProcessingRequest`` unless `raw` asks for the source as is.
    var extensionText: String?

    /// Why a path is not one this server takes (answered 400), naming what is wrong.
    struct Invalid: Error, Equatable {
        var reason: String
    }

    /// The resizing types imgproxy's old "basic" URL format started with; a path starting with one
    /// is refused as imgproxy refuses it.
    private static let basicFormatWords: Set<String> = ["fit", "fill", "fill-down", "force", "auto"]

    init(signature: String, signedPath: String, optionSegments: [String], source: URL, extensionText: String?) {
        self.signature = signature
        self.signedPath = signedPath
        self.optionSegments = optionSegments
        self.source = source
        self.extensionText = extensionText
    }

    /// Takes `path` apart as `parsing` says (imgproxy's defaults unless given): its arguments
    /// separator tells options from the source, only presets may be asked for, a base64 source may
    /// carry a file name, and the source is rewritten and put under the base URL.
    init(path: String, parsing: URLParsing = URLParsing()) throws(Invalid) {
        let trimmed = path.hasPrefix("/") ? path.dropFirst() : Substring(path)
        guard let slash = trimmed.firstIndex(of: "/") else {
            throw Invalid(reason: "expected /<signature>/<options>/plain/<source URL> or /<signature>/<options>/<base64url source URL>")
        }
        let signature = String(trimmed[..<slash])
        let rest = Self.repaired(String(trimmed[trimmed.index(after: slash)...]))
        guard !signature.isEmpty, !rest.isEmpty else {
            throw Invalid(reason: "expected /<signature>/<options>/plain/<source URL> or /<signature>/<options>/<base64url source URL>")
        }
        self.signature = signature
        signedPath = "/" + rest
        let segments = rest.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var options: [String] = []
        var index = 0
        if parsing.onlyPresets {   // imgproxy's parsePathPresets: the first segment names presets
            options = ["preset" + String(parsing.argumentsSeparator) + segments[0]]
            index = 1
        } else if let first = segments.first, Self.basicFormatWords.contains(first) {
            throw Invalid(reason: "imgproxy's old basic URL format (/\(first)/width/height/...) is not supported; use rs:\(first):width:height")
        }
        var source: URL?
        var extensionText: String?
        while index < segments.count {
            let segment = segments[index]
            if segment == "plain" && index + 1 < segments.count {
                (source, extensionText) = try Self.plainSource(segments[(index + 1)...].joined(separator: "/"), parsing: parsing)
                break
            }
            if parsing.onlyPresets || !segment.contains(parsing.argumentsSeparator) {
                var encoded = segments[index...]
                if parsing.base64IncludesFilename && encoded.count > 1 { encoded = encoded.dropLast() }
                (source, extensionText) = try Self.base64Source(encoded.joined(), parsing: parsing)
                break
            }
            options.append(segment)
            index += 1
        }
        guard let source else { throw Invalid(reason: "the path names no source") }
        self.optionSegments = options
        self.source = source
        self.extensionText = extensionText
    }

    /// The path after the signature as imgproxy repairs it: `%3A` → `:` in the options part, a
    /// scheme collapsed to one slash (`https:/host`) restored in a plain source, and an empty first
    /// segment (`//plain/...`) dropped.
    static func repaired(_ path: String) -> String {
        var options: String, plain: String?
        if path.hasPrefix("plain/") {
            options = ""
            plain = String(path.dropFirst("plain/".count))
        } else if let range = path.range(of: "/plain/") {
            options = String(path[..<range.lowerBound])
            plain = String(path[range.upperBound...])
        } else {
            options = path
        }
        if options.utf8.contains(UInt8(ascii: "%")) { options = options.replacingOccurrences(of: "%3A", with: ":") }
        guard var plainURL = plain else { return options.hasPrefix("/") ? String(options.dropFirst()) : options }
        if let (scheme, rest) = collapsedScheme(in: plainURL) {
            plainURL = scheme + (scheme == "local" ? ":///" : "://") + rest
        }
        let joined = options.isEmpty ? "plain/" + plainURL : options + "/plain/" + plainURL
        return joined.hasPrefix("/") ? String(joined.dropFirst()) : joined
    }

    /// A scheme collapsed to one slash, as imgproxy finds it (its `^(\S+):/([^/])`, greedy): in the
    /// leading run without white space, the last `:/` followed by something other than `/`. Returns
    /// the scheme part and what follows the `:/`. Found by hand: a Swift `Regex` here cost a warm
    /// request a tenth of its time.
    static func collapsedScheme(in url: String) -> (Substring, Substring)? {
        let bytes = Array(url.utf8)
        let space = bytes.firstIndex { $0 == 0x20 || (0x09...0x0D).contains($0) } ?? bytes.count
        var colon = space - 2   // the `:` and the `/` are inside the run; the character after may not be
        while colon >= 1 {
            if bytes[colon] == UInt8(ascii: ":"), bytes[colon + 1] == UInt8(ascii: "/"), colon + 2 < bytes.count,
               bytes[colon + 2] != UInt8(ascii: "/") {
                let at = url.utf8.index(url.utf8.startIndex, offsetBy: colon)
                return (url[..<at], url[url.utf8.index(at, offsetBy: 2)...])
            }
            colon -= 1
        }
        return nil
    }

    private static func plainSource(_ text: String, parsing: URLParsing) throws(Invalid) -> (URL, String?) {
        let pieces = text.split(separator: "@", omittingEmptySubsequences: false)
        guard pieces.count <= 2 else {
            throw Invalid(reason: "the plain source has more than one @: escape an @ in the URL as %40")
        }
        let extensionText = pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil
        guard !pieces[0].isEmpty, let decoded = String(pieces[0]).removingPercentEncoding else {
            throw Invalid(reason: "the plain source URL is empty or its percent-encoding is broken")
        }
        return (try url(parsing.preprocessed(decoded)), extensionText)
    }

    private static func base64Source(_ text: String, parsing: URLParsing) throws(Invalid) -> (URL, String?) {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count <= 2 else { throw Invalid(reason: "the base64 source has more than one extension") }
        let extensionText = pieces.count == 2 && !pieces[1].isEmpty ? String(pieces[1]) : nil
        guard !pieces[0].isEmpty, let bytes = base64URLDecoded(String(pieces[0])), let decoded = String(data: bytes, encoding: .utf8) else {
            throw Invalid(reason: "the source is neither an option (name:arguments) nor a base64url-encoded URL: \(text.prefix(64))")
        }
        return (try url(parsing.preprocessed(decoded)), extensionText)
    }

    private static func url(_ text: String) throws(Invalid) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw Invalid(reason: "the source must be an http, https, s3 or local URL: \(text.prefix(200))")
        }
        if scheme == "local" {
            guard url.path.count > 1 else { throw Invalid(reason: "a local source names a file: local:///path/in/the/local/root") }
            return url
        }
        if scheme == "s3" {   // imgproxy's `s3://bucket/key` (WebImageS3's S3Loader reads it)
            guard url.host?.isEmpty == false, url.path.count > 1 else {
                throw Invalid(reason: "an s3 source names a bucket and a key: s3://bucket/path/to/key")
            }
            return url
        }
        guard scheme == "http" || scheme == "https", url.host?.isEmpty == false else {
            throw Invalid(reason: "the source must be an http, https, s3 or local URL: \(text.prefix(200))")
        }
        return url
    }

    /// Decodes base64url with or without `=` padding (the standard alphabet's `+` and `/` are refused).
    static func base64URLDecoded(_ text: String) -> Data? {
        var unpadded = Substring(text)
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        guard !unpadded.contains("+"), !unpadded.contains("/") else { return nil }
        var base64 = unpadded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
