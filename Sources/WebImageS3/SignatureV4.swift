import Foundation
import Synchronization
import WebImage

/// AWS Signature Version 4 (`AWS4-HMAC-SHA256`), as AWS documents it: a canonical request (method,
/// URI, sorted query, sorted lower-case headers, the signed header names, the payload's SHA-256),
/// a string to sign naming the date, region and service, and an HMAC-SHA256 chain from the secret
/// through the date, region, service and `aws4_request`. Checked against AWS's published examples
/// (the S3 developer guide's GET, PUT, lifecycle and list requests, and the SigV4 test suite).
final class SignatureV4: Sendable {
    let credentials: S3Credentials
    let region: String
    /// `s3` for every request here; the test suite's vectors use `service`.
    let service: String
    /// The last day's signing key (four HMACs saved on every other request of the day).
    private let dayKey = Mutex<(day: String, key: [UInt8])?>(nil)

    init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The SHA-256 of an empty payload, in hex.
    static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// `headers` with `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token` (temporary
    /// credentials) and `authorization` added. `headers` must not hold `host`: it is taken from the URL.
    func signed(method: String, url: URL, headers: [String: String], payloadHash: String, date: Date) -> [String: String] {
        var headers = Dictionary(uniqueKeysWithValues: headers.map { ($0.key.lowercased(), $0.value) })
        let (amzDate, day) = Self.timestamps(date)
        headers["x-amz-date"] = amzDate
        if service == "s3" { headers["x-amz-content-sha256"] = payloadHash }
        if let token = credentials.sessionToken { headers["x-amz-security-token"] = token }
        var signing = headers
        signing["host"] = Self.hostHeader(url)
        let (canonical, signedHeaders) = Self.canonicalRequest(method: method, url: url, headers: signing, payloadHash: payloadHash)
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = "AWS4-HMAC-SHA256\n\(amzDate)\n\(scope)\n\(Self.hex(HMAC.digest(Array(canonical.utf8))))"
        let signature = Self.hex(HMAC.sha256(key: signingKey(day: day), message: Array(stringToSign.utf8)))
        headers["authorization"] = "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
        return headers
    }

    /// The key of one day: HMAC("AWS4" + secret, day) → region → service → "aws4_request".
    func signingKey(day: String) -> [UInt8] {
        if let cached = dayKey.withLock({ $0 }), cached.day == day { return cached.key }
        var key = HMAC.sha256(key: Array(("AWS4" + credentials.secretAccessKey).utf8), message: Array(day.utf8))
        for part in [region, service, "aws4_request"] { key = HMAC.sha256(key: key, message: Array(part.utf8)) }
        let made = key
        dayKey.withLock { $0 = (day, made) }
        return key
    }

    /// The canonical request and the signed header names (`host;x-amz-date;...`).
    static func canonicalRequest(method: String, url: URL, headers: [String: String], payloadHash: String) -> (String, String) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? "/"
        // Already encoded by S3ClientConfig.url; decoded and encoded again to the canonical form.
        func canonical(_ text: Substring) -> String { encode(String(text).removingPercentEncoding ?? String(text)) }
        var pairs: [(name: String, value: String)] = []
        for pair in (components?.percentEncodedQuery ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            pairs.append((canonical(parts[0]), parts.count > 1 ? canonical(parts[1]) : ""))
        }
        pairs.sort { $0.name == $1.name ? $0.value < $1.value : $0.name < $1.name }
        let query = pairs.map { $0.name + "=" + $0.value }.joined(separator: "&")
        let names = headers.keys.map { $0.lowercased() }.sorted()
        let canonicalHeaders = names.map { name -> String in
            let value = headers[name]!.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            return "\(name):\(value)\n"
        }.joined()
        let signed = names.joined(separator: ";")
        return ([method, path.isEmpty ? "/" : path, query, canonicalHeaders, signed, payloadHash].joined(separator: "\n"), signed)
    }

    /// `host` or `host:port` when the port is not the scheme's own.
    static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port else { return host }
        let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
        return port == defaultPort ? host : "\(host):\(port)"
    }

    /// `20150830T123600Z` and `20150830`, in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let day = "\(parts.tm_year + 1900)" + two(parts.tm_mon + 1) + two(parts.tm_mday)
        return (day + "T" + two(parts.tm_hour) + two(parts.tm_min) + two(parts.tm_sec) + "Z", day)
    }

    /// RFC 3986 encoding as SigV4 wants it: letters, digits and `-._~` as they are, every other
    /// byte of the UTF-8 as `%XX` in upper case.
    static func encode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String { HexDigits.string(bytes) }
}
