import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download's part in resuming: whether it may take part at all, the kept partial it asked the
/// server to continue, and the validator under which its own bytes could be kept if it is cut short.
///
/// A value in the ``DownloadOperation``'s state (behind its lock); it never touches the
/// ``PartialDownloadStore`` itself, so no lock is taken inside another. The rules:
/// - only a plain `GET` without its own `Range` or conditional headers takes part;
/// - a `206` continues the partial only when its `Content-Range` starts exactly where the partial ends
///   and runs to the end of the body, its validator is the partial's and it has no content coding;
///   any other `206`, or a `416`, means: drop the partial and send the request again without `Range`;
/// - any other `2xx` (the validator changed, or the server ignores ranges) drops the partial and the
///   body starts from byte 0; a failure status leaves the partial to be kept again;
/// - the body of a `200` can be kept if the response qualifies (``PartialDownload/Validator``) and the
///   download ends with a failure the next attempt may get past (cut short, timed out, connection
///   error, cancelled).
struct DownloadResumption: Sendable {
    /// What to do with a response.
    enum Verdict: Sendable, Equatable {
        /// Read the body from byte 0.
        case fromStart
        /// The `206` continues `prefix`; the whole body is `total` bytes and its response reports `headers`.
        case continues(prefix: Data, total: Int, headers: [String: String])
        /// The response cannot continue the partial: drop it and send the request again without `Range`.
        case restart
    }

    /// Whether this download keeps and continues partials at all.
    private(set) var isEligible = false
    /// The partial the request asked to continue, until a response settles it.
    private(set) var pending: PartialDownload?
    /// The validator the bytes received so far could be kept under (`nil`: they cannot be).
    private(set) var validator: PartialDownload.Validator?
    /// The header fields of the body being received (names lowercased), kept with it.
    private(set) var headers: [String: String] = [:]
    /// The bytes at the start of the body that came from a kept partial.
    private(set) var resumedBytes = 0

    /// A download that takes no part in resuming.
    init() {}

    /// A download that takes part, asking to continue `partial` if there is one.
    init(continuing partial: PartialDownload?) {
        isEligible = true
        pending = partial
    }

    /// Whether a request may keep and continue partials: a `GET` whose caller sent no `Range` and no
    /// validators of its own (a revalidation wants a 304 or the whole new body, never a continuation).
    static func mayTakePart(_ request: URLRequest) -> Bool {
        guard (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        let own = ["Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]
        return own.allSatisfy { request.value(forHTTPHeaderField: $0) == nil }
    }

    /// Adds `Range: bytes=N-` and `If-Range` to ask for the rest of `partial`.
    static func askForRest(of partial: PartialDownload, in request: inout URLRequest) {
        request.setValue("bytes=\(partial.data.count)-", forHTTPHeaderField: "Range")
        request.setValue(partial.validator.headerValue, forHTTPHeaderField: "If-Range")
    }

    /// Removes what ``askForRest(of:in:)`` added.
    static func withoutRange(_ request: URLRequest) -> URLRequest {
        var request = request
        request.setValue(nil, forHTTPHeaderField: "Range")
        request.setValue(nil, forHTTPHeaderField: "If-Range")
        return request
    }

    /// Settles a response (after the response modifiers), given its header fields with names lowercased.
    mutating func evaluate(statusCode: Int, headers: [String: String]) -> Verdict {
        guard isEligible else { return .fromStart }
        if let partial = pending {
            switch statusCode {
            case 206:
                pending = nil
                guard let total = Self.total(continuing: partial, headers: headers) else { return .restart }
                var merged = partial.headers.merging(headers) { $1 }
                merged["content-range"] = nil
                merged["content-length"] = String(total)
                validator = partial.validator
                self.headers = merged
                resumedBytes = partial.data.count
                return .continues(prefix: partial.data, total: total, headers: merged)
            case 416:
                pending = nil
                return .restart
            case 200..<300:
                pending = nil
            default:
                validator = nil
                return .fromStart
            }
        }
        validator = PartialDownload.Validator(resumableResponseWith: statusCode, headers: headers)
        self.headers = validator == nil ? [:] : headers
        resumedBytes = 0
        return .fromStart
    }

    /// The partial to keep when the download fails with `error` after receiving `body` (the whole
    /// body so far, a continued partial's bytes included): the pending partial if no response settled
    /// it, else the body if it can be resumed and the failure is one a later attempt may get past.
    /// `body` is asked for only then (it is a copy of the bytes received, made for the partial).
    func leftover(body: @autoclosure () -> Data, error: WebImageError) -> PartialDownload? {
        guard isEligible else { return nil }
        if let pending { return pending }
        guard let validator else { return nil }
        switch error {
        case .truncatedResponse, .timedOut, .transport, .cancelled: break
        default: return nil
        }
        let bytes = body()
        guard !bytes.isEmpty else { return nil }
        return PartialDownload(data: bytes, validator: validator, headers: headers)
    }

    /// The size of the whole body if a `206` with `headers` continues `partial` exactly, else `nil`.
    static func total(continuing partial: PartialDownload, headers: [String: String]) -> Int? {
        guard partial.validator.matches(headers), PartialDownload.Validator.hasNoContentCoding(headers),
              let range = headers["content-range"].flatMap(contentRange),
              range.first == partial.data.count, range.total.map({ range.last == $0 - 1 }) ?? true
        else { return nil }
        if let length = headers["content-length"], Int(length.trimmingCharacters(in: .whitespaces)) != range.last - range.first + 1 {
            return nil
        }
        return range.last + 1
    }

    /// Parses a `Content-Range` of bytes: `bytes first-last/total` or `bytes first-last/*`.
    static func contentRange(_ value: String) -> (first: Int, last: Int, total: Int?)? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard text.count > 6, text.prefix(6).lowercased() == "bytes " else { return nil }
        let parts = text.dropFirst(6).trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = number(bounds[0]), let last = number(bounds[1]), first <= last else { return nil }
        if parts[1] == "*" { return (first, last, nil) }
        guard let total = number(parts[1]), total > last else { return nil }
        return (first, last, total)
    }

    /// A run of ASCII digits as a number (no sign, no spaces).
    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }
}
