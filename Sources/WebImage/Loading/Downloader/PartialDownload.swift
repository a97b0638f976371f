import Foundation

/// The bytes of a download that was cut short, kept with the validator that lets the next request for
/// the same URL ask for the rest (`Range: bytes=N-` with `If-Range`).
///
/// Only a response that promises the same bytes again may leave one behind: a `200` with
/// `Accept-Ranges: bytes`, no content coding (URLSession hands over decoded bytes, while a range counts
/// encoded ones), and a strong `ETag` or, failing that, a `Last-Modified` date.
struct PartialDownload: Sendable, Equatable {
    /// What `If-Range` is sent with, and what a `206` must carry to continue these bytes.
    enum Validator: Sendable, Hashable {
        /// A strong entity tag, quotes included (`"abc"`; a weak `W/"abc"` never qualifies).
        case entityTag(String)
        /// A `Last-Modified` date, as the server sent it.
        case lastModified(String)

        /// The validator of a response whose body can be resumed, or `nil` when it cannot be.
        /// - Parameters:
        ///   - statusCode: only a `200` starts a body that can be resumed.
        ///   - headers: the response's header fields, names lowercased.
        init?(resumableResponseWith statusCode: Int, headers: [String: String]) {
            guard statusCode == 200, Self.acceptsByteRanges(headers), Self.hasNoContentCoding(headers) else { return nil }
            if let tag = headers["etag"]?.trimmingCharacters(in: .whitespaces), Self.isStrongEntityTag(tag) {
                self = .entityTag(tag)
            } else if let date = headers["last-modified"]?.trimmingCharacters(in: .whitespaces), !date.isEmpty {
                self = .lastModified(date)
            } else {
                return nil
            }
        }

        /// The `If-Range` value.
        var headerValue: String {
            switch self {
            case .entityTag(let tag): tag
            case .lastModified(let date): date
            }
        }

        /// Whether a response with `headers` (names lowercased) carries this same validator.
        func matches(_ headers: [String: String]) -> Bool {
            switch self {
            case .entityTag(let tag): headers["etag"]?.trimmingCharacters(in: .whitespaces) == tag
            case .lastModified(let date): headers["last-modified"]?.trimmingCharacters(in: .whitespaces) == date
            }
        }

        /// `Accept-Ranges` lists the `bytes` unit.
        static func acceptsByteRanges(_ headers: [String: String]) -> Bool {
            guard let value = headers["accept-ranges"] else { return false }
            return value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces).lowercased() == "bytes" }
        }

        /// No `Content-Encoding`, or `identity`: the bytes received are the bytes a range counts.
        static func hasNoContentCoding(_ headers: [String: String]) -> Bool {
            let coding = headers["content-encoding"]?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return coding.isEmpty || coding == "identity"
        }

        /// A quoted tag without the weak prefix `W/` (RFC 9110 §8.8.3).
        static func isStrongEntityTag(_ tag: String) -> Bool {
            tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"")
        }
    }

    /// The first bytes of the body, never empty.
    var data: Data
    /// The validator the bytes were received under.
    var validator: Validator
    /// The header fields of the response the bytes came from (names lowercased): a resumed response
    /// reports them, overlaid with the `206`'s own.
    var headers: [String: String]

    /// What the partial costs against ``DownloaderConfig/maxResumableDataBytes``.
    var cost: Int { data.count }
}
