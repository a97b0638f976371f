/// The status line and header fields of an HTTP/1.x answer.
package struct HTTP1Head: Sendable {
    /// `HTTP/1.0` or `HTTP/1.1`.
    package var version: String
    package var status: Int
    /// Header fields in the order received, names as sent.
    package var fields: [(name: String, value: String)]

    /// The value of field `name` (any case); several are joined with ", " (RFC 9110 §5.3).
    package func value(of name: String) -> String? {
        let values = fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Parses a head without its blank line; `nil` when the status line is not HTTP/1.x.
    init?(text: String) {
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ", maxSplits: 2) ?? []
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]) else { return nil }
        version = String(parts[0])
        self.status = status
        fields = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    /// How its body is framed, for an answer to a request of `method`.
    package func bodyFraming(forMethod method: String) -> HTTP1BodyFraming {
        if method == "HEAD" || status == 204 || status == 304 || (100..<200).contains(status) { return .none }
        if value(of: "Transfer-Encoding")?.lowercased().contains("chunked") == true { return .chunked }
        if let text = value(of: "Content-Length") {
            // Repeated equal values ("5, 5") are one length (RFC 9110 §8.6); anything else is malformed.
            let lengths = Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            guard lengths.count == 1, let length = Int(lengths.first!), length >= 0 else { return .malformed }
            return .length(length)
        }
        return .untilClose
    }

    /// Whether the connection may carry another request after this answer (its body read whole).
    package var keepsAlive: Bool {
        let connection = value(of: "Connection")?.lowercased() ?? ""
        return version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
    }
}

/// Where an answer's body ends.
package enum HTTP1BodyFraming: Equatable, Sendable {
    case none
    case length(Int)
    case chunked
    /// Until the server closes the connection (no length, not chunked).
    case untilClose
    /// Conflicting `Content-Length` values, or one that is not a number.
    case malformed
}
