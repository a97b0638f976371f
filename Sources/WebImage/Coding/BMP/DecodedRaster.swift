/// A decoded raster: 8-bit samples, `channels` interleaved (1 grey, 2 grey+alpha, 3 RGB, 4 RGBA with
/// straight alpha), rows top to bottom, tightly packed (`width * channels` bytes a row).
struct DecodedRaster: Sendable, Equatable {
    var width: Int
    var height: Int
    var channels: Int
    var pixels: [UInt8]

    /// The same pixels as 8-bit straight RGBA (grey replicated, a missing alpha 255).
    func rgbaPixels() -> [UInt8] {
        if channels == 4 { return pixels }
        let count = width * height
        var out = [UInt8](repeating: 255, count: count * 4)
        out.withUnsafeMutableBufferPointer { dst in
            pixels.withUnsafeBufferPointer { src in
                for i in 0..<count {
                    let s = i * channels, d = i * 4
                    switch channels {
                    case 1:
                        dst[d] = src[s]; dst[d + 1] = src[s]; dst[d + 2] = src[s]
                    case 2:
                        dst[d] = src[s]; dst[d + 1] = src[s]; dst[d + 2] = src[s]; dst[d + 3] = src[s + 1]
                    default:
                        dst[d] = src[s]; dst[d + 1] = src[s + 1]; dst[d + 2] = src[s + 2]
                    }
                }
            }
        }
        return out
    }
}

/// Why a BMP, DIB or ICO could not be decoded.
enum RasterDecodingError: Error, Equatable, Sendable {
    /// The bytes end before the headers, the palette, the pixel data or the icon mask do.
    case truncated
    /// A header field, a run or an index is impossible.
    case corrupt(String)
    /// A valid layout this decoder does not read (embedded JPEG/PNG, OS/2 Huffman/RLE24, 64-bit).
    case unsupported(String)
    /// The declared size is beyond the format's limit (65535 a side) or the caller's pixel budget.
    case tooLarge(width: Int, height: Int)
}

extension [UInt8] {
    /// Appends the low `bytes` bytes of `value`, least significant first (BMP and ICO headers).
    mutating func appendLittleEndian(bytes: Int, _ value: Int) {
        for index in 0..<bytes { append(UInt8(truncatingIfNeeded: value >> (8 * index))) }
    }
}
