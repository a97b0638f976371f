import Foundation

/// One page of a ListObjectsV2 answer, read from S3's XML with a plain scan of its few elements
/// (no XML library needed: FoundationXML would add libxml2 to the product's system packages).
public struct S3Listing: Sendable {
    /// One object: its key, when it was last written, its size.
    public struct Object: Sendable, Hashable {
        /// The object's key.
        public var key: String
        /// `LastModified`.
        public var lastModified: Date
        /// Its size in bytes.
        public var size: Int
    }

    /// The objects of this page.
    public var objects: [Object]
    /// The token of the next page, `nil` on the last.
    public var nextContinuationToken: String?

    /// Reads a `ListBucketResult`.
    /// - Throws: ``S3Error/malformed(_:)`` when it is not one.
    init(xml: Data) throws(S3Error) {
        let text = String(decoding: xml, as: UTF8.self)
        guard text.contains("<ListBucketResult") else { throw .malformed("not a ListBucketResult") }
        objects = []
        for contents in Self.elements("Contents", in: text) {
            guard let key = Self.elements("Key", in: contents).first.map(Self.unescaped),
                  let modified = Self.elements("LastModified", in: contents).first.flatMap(Self.date),
                  let size = Self.elements("Size", in: contents).first.flatMap({ Int($0) }) else {
                throw .malformed("an object without its key, date or size")
            }
            objects.append(Object(key: key, lastModified: modified, size: size))
        }
        let truncated = Self.elements("IsTruncated", in: text).first == "true"
        nextContinuationToken = truncated ? Self.elements("NextContinuationToken", in: text).first.map(Self.unescaped) : nil
        if truncated && nextContinuationToken == nil { throw .malformed("a truncated listing without its next token") }
    }

    /// The texts of every `<name>…</name>` in `text`, in order.
    static func elements(_ name: String, in text: String) -> [String] {
        var found: [String] = []
        var rest = text[...]
        while let open = rest.range(of: "<\(name)>"), let close = rest.range(of: "</\(name)>", range: open.upperBound..<rest.endIndex) {
            found.append(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return found
    }

    /// The `<Code>` of an S3 error body, if it has one.
    static func errorCode(in body: Data) -> String? {
        elements("Code", in: String(decoding: body.prefix(4096), as: UTF8.self)).first
    }

    static func unescaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// `2013-05-24T00:00:00.000Z` (fractions optional).
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}
