/// The part MD5 and SHA-256 share: cutting a byte stream into 64-byte blocks for a compression
/// function, keeping the partial block between calls, and the final padding (0x80, zeros, then the
/// message length in bits as 8 bytes, little-endian for MD5, big-endian for SHA-256).
struct DigestBlockBuffer {
    private var block = [UInt8](repeating: 0, count: 64)
    private var buffered = 0
    private var length: UInt64 = 0

    /// Feeds `bytes`, calling `compress` with every complete 64-byte block.
    mutating func append(_ bytes: UnsafeRawBufferPointer, compress: (UnsafeRawBufferPointer) -> Void) {
        length &+= UInt64(bytes.count)
        var index = 0
        if buffered > 0 {
            let take = min(64 - buffered, bytes.count)
            for i in 0..<take { block[buffered + i] = bytes[i] }
            buffered += take
            index = take
            if buffered == 64 {
                block.withUnsafeBytes { compress($0) }
                buffered = 0
            }
        }
        while bytes.count - index >= 64 {
            compress(UnsafeRawBufferPointer(rebasing: bytes[index..<(index + 64)]))
            index += 64
        }
        while index < bytes.count {
            block[buffered] = bytes[index]
            buffered += 1
            index += 1
        }
    }

    /// Appends the padding and length, compressing the last block(s).
    mutating func finish(bigEndianLength: Bool, compress: (UnsafeRawBufferPointer) -> Void) {
        let bitLength = length &* 8
        let afterPad = (buffered + 1) % 64
        var padding: [UInt8] = [0x80] + [UInt8](repeating: 0, count: afterPad <= 56 ? 56 - afterPad : 120 - afterPad)
        for index in 0..<8 {
            let shift = UInt64(bigEndianLength ? 56 - 8 * index : 8 * index)
            padding.append(UInt8(truncatingIfNeeded: bitLength >> shift))
        }
        padding.withUnsafeBytes { append($0, compress: compress) }
    }
}
