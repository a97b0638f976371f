/// HMAC-SHA256 (RFC 2104) over the package's own SHA-256: imgproxy's URL signatures and AWS
/// Signature Version 4 both use it.
package enum HMAC {
    /// The 32-byte HMAC-SHA256 of `message` under `key` (a key longer than the 64-byte block is hashed first).
    package static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? digest(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = digest(block.map { $0 ^ 0x36 } + message)
        return digest(block.map { $0 ^ 0x5c } + inner)
    }

    /// The SHA-256 of `bytes`.
    package static func digest(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }
}
