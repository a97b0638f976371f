import Foundation

/// imgproxy's URL signatures, exactly: the signature segment is the base64url (no padding)
/// HMAC-SHA256, keyed with the key, of the salt followed by the path after the signature segment
/// (from its `/`, as imgproxy repairs it). Key and salt are given in hex. What `webimage serve`
/// checks, and what ``ProcessingURLBuilder`` signs with.
public struct ProcessingURLSigner: Sendable {
    let key: [UInt8]
    let salt: [UInt8]
    /// The bytes of the HMAC the signature keeps (imgproxy's `IMGPROXY_SIGNATURE_SIZE`, 1–32).
    let size: Int

    /// Why a key or salt cannot be used.
    public struct InvalidKey: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, naming the key or the salt.
        public let reason: String
        /// The reason.
        public var description: String { reason }
    }

    /// Creates a signer from imgproxy's `IMGPROXY_KEY` and `IMGPROXY_SALT` values, keeping the first
    /// `signatureSize` bytes of the HMAC (`IMGPROXY_SIGNATURE_SIZE`; default 32, all of it).
    /// - Throws: ``InvalidKey`` when the key or the salt is not hex or is empty, or the size is not 1–32.
    public init(keyHex: String, saltHex: String, signatureSize: Int = 32) throws(InvalidKey) {
        guard let key = HexDigits.bytes(keyHex), !key.isEmpty else { throw InvalidKey(reason: "the key is not a hex string") }
        guard let salt = HexDigits.bytes(saltHex), !salt.isEmpty else { throw InvalidKey(reason: "the salt is not a hex string") }
        guard (1...32).contains(signatureSize) else { throw InvalidKey(reason: "the signature size is not 1 to 32 bytes: \(signatureSize)") }
        self.key = key
        self.salt = salt
        self.size = signatureSize
    }

    /// The signature of `path` (everything after the signature segment, starting with `/`).
    public func signature(of path: String) -> String {
        Self.base64URL(Array(Self.hmacSHA256(key: key, message: salt + Array(path.utf8)).prefix(size)))
    }

    /// Whether `signature` signs `path`, compared in constant time (no early exit on the first difference).
    public func isValid(_ signature: String, for path: String) -> Bool {
        ConstantTime.equals(Array(signature.utf8), Array(self.signature(of: path).utf8))
    }

    static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        HMAC.sha256(key: key, message: message)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
