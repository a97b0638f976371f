extension Image {
    /// The SHA-256 of the pixels as 8-bit straight-alpha RGBA, rows top to bottom, tightly packed,
    /// in lower-case hex: a fingerprint for comparing decodes.
    ///
    /// This is the `expected_rgba_sha256` definition of the test corpus's manifest and what
    /// `webimage decode --checksum` prints: gray is replicated to RGB, opaque formats get alpha 255.
    /// It hashes the pixels as they are stored; call ``oriented()`` first for the displayed pixels.
    /// 16-bit samples are hashed narrowed to the nearest 8-bit values (``reducedToEightBits()``).
    public func rgbaSHA256() -> String {
        var hasher = SHA256()
        var rgbaRow = [UInt8](repeating: 0, count: width * 4)
        var deepRow = [UInt16](repeating: 0, count: pixelFormat.isHighBitDepth ? width * 4 : 0)
        for y in 0..<height {
            withUnsafeRow(y) { source in
                rgbaRow.withUnsafeMutableBytes { rgba in
                    if pixelFormat.isHighBitDepth {
                        deepRow.withUnsafeMutableBufferPointer { deep in
                            Self.expandToRGBA16(source, from: pixelFormat, into: deep, width: width)
                            Self.packRGBA16(UnsafeBufferPointer(deep), into: rgba.baseAddress!, as: .rgba8, width: width)
                        }
                    } else {
                        Self.expandToRGBA(source, from: pixelFormat, into: rgba, width: width)
                    }
                    hasher.update(UnsafeRawBufferPointer(rgba))
                }
            }
        }
        return hasher.finalize().hexString
    }
}
