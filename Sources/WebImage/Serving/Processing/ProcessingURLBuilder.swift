import Foundation

/// Builds the imgproxy-format URLs a service puts in its `<img>` tags, for `webimage serve` (or
/// imgproxy itself): `<base>/<signature>/<options>/<base64url source>.<extension>`, signed when a
/// ``ProcessingURLSigner`` is given (else the signature segment is `insecure`).
///
/// The options part is ``ProcessingOptions/key`` (imgproxy's syntax), then `q:` and
/// `fq:`-free output settings; the server reads the URL back as the same options.
public struct ProcessingURLBuilder: Sendable {
    /// Where the server answers, such as `https://img.example.com`; its path, if any, is kept as a prefix.
    public let base: URL
    /// Signs paths; `nil`: unsigned URLs (`insecure`), for servers started with `--unsigned`.
    public let signer: ProcessingURLSigner?

    /// How the source URL is written into the path.
    public enum SourceEncoding: Sendable {
        /// base64url, split into 16-character segments (imgproxy's recommendation: no escaping
        /// problems, and long URLs stay readable by proxies with segment limits). The default.
        case base64
        /// `plain/<percent-encoded URL>`.
        case plain
    }

    /// Creates a builder for the server at `base`, signing with `signer` (default none).
    public init(base: URL, signer: ProcessingURLSigner? = nil) {
        self.base = base
        self.signer = signer
    }

    /// The path (from its `/`, signature included) asking for `source` processed by `options`, in
    /// `format` (default none: the server keeps the source's format) at `quality` (1–100; default
    /// none: the server's per-format default).
    public func path(for source: URL, options: ProcessingOptions = ProcessingOptions(), format: ImageFormat? = nil,
                     quality: Int? = nil, encoding: SourceEncoding = .base64) -> String {
        var segments = options.key.isEmpty ? [] : [options.key]
        if let quality { segments.append("q:\(min(max(quality, 1), 100))") }
        let fileExtension = format.map { $0.fileExtension ?? $0.rawValue }
        switch encoding {
        case .base64:
            let encoded = ProcessingURLSigner.base64URL(Array(source.absoluteString.utf8))
            let pieces = stride(from: 0, to: encoded.count, by: 16).map { offset -> String in
                let start = encoded.index(encoded.startIndex, offsetBy: offset)
                return String(encoded[start..<(encoded.index(start, offsetBy: 16, limitedBy: encoded.endIndex) ?? encoded.endIndex)])
            }
            segments.append(pieces.joined(separator: "/") + (fileExtension.map { ".\($0)" } ?? ""))
        case .plain:
            var allowed = CharacterSet.urlPathAllowed
            allowed.remove(charactersIn: "@?#%")
            let escaped = source.absoluteString.addingPercentEncoding(withAllowedCharacters: allowed) ?? source.absoluteString
            segments.append("plain/" + escaped + (fileExtension.map { "@\($0)" } ?? ""))
        }
        let signed = "/" + segments.joined(separator: "/")
        return "/" + (signer?.signature(of: signed) ?? "insecure") + signed
    }

    /// ``path(for:options:format:quality:encoding:)`` on ``base``.
    public func url(for source: URL, options: ProcessingOptions = ProcessingOptions(), format: ImageFormat? = nil,
                    quality: Int? = nil, encoding: SourceEncoding = .base64) -> URL {
        let prefix = base.absoluteString.hasSuffix("/") ? String(base.absoluteString.dropLast()) : base.absoluteString
        return URL(string: prefix + path(for: source, options: options, format: format, quality: quality, encoding: encoding))!
    }
}
