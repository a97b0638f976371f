import Foundation

// Byte ranges for the test server (RFC 9110 §14): enough of them to test resuming downloads.

extension TestResponse {
    /// The reply to `request` once `servesRanges` is applied: this reply unchanged unless it serves
    /// ranges, is a plain 200 and `request` is a GET with a `Range: bytes=N-` or `bytes=N-M` (one
    /// range) whose `If-Range`, if any, matches; then a 206 with `Content-Range` and that slice of
    /// `body`, or a 416 with `Content-Range: bytes */LENGTH` when N is past the end.
    func answering(_ request: RecordedRequest) -> TestResponse {
        guard servesRanges, status == 200, misbehavior == nil, request.method == "GET",
              let range = request.headers["range"].flatMap(Self.byteRange)
        else { return self }
        if let condition = request.headers["if-range"], !ifRangeMatches(condition) { return self }
        let length = body.count
        var reply = self
        reply.headers.removeAll { $0.0.caseInsensitiveCompare("Content-Length") == .orderedSame }
        guard range.first < length else {
            reply.status = 416
            reply.body = Data()
            reply.headers.append(("Content-Range", "bytes */\(length)"))
            return reply
        }
        let last = min(range.last ?? length - 1, length - 1)
        reply.status = 206
        reply.body = body.subdata(in: range.first..<(last + 1))
        reply.headers.append(("Content-Range", "bytes \(range.first)-\(last)/\(length)"))
        return reply
    }

    /// Whether an `If-Range` value matches this reply: a strong `ETag` equal to it, or a
    /// `Last-Modified` equal to it (a weak tag never matches, as RFC 9110 §13.1.5 requires).
    private func ifRangeMatches(_ condition: String) -> Bool {
        if condition.hasPrefix("\"") {
            guard let tag = header("ETag"), !tag.hasPrefix("W/") else { return false }
            return tag == condition
        }
        return header("Last-Modified") == condition
    }

    /// `bytes=N-` or `bytes=N-M`; `nil` for anything else (suffix ranges, several ranges, junk).
    static func byteRange(_ value: String) -> (first: Int, last: Int?)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.hasPrefix("bytes="), !text.contains(",") else { return nil }
        let bounds = text.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), first >= 0 else { return nil }
        if bounds[1].isEmpty { return (first, nil) }
        guard let last = Int(bounds[1]), last >= first else { return nil }
        return (first, last)
    }
}
