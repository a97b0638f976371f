/// BI_RLE8 / BI_RLE4 decoding as the corpus reference defines it: pixels the stream never writes (delta jumps,
/// early end of line or of bitmap) stay transparent black (0,0,0,0); a run, literal or delta that goes past
/// the row or the image is `.corrupt`; a stream that ends before its end-of-bitmap marker is `.truncated`;
/// after the last row only end-of-bitmap may follow. Runs fill rows bottom-up (top-down RLE is refused by
/// `BMPLayout.parse`).
enum BMPRunLength {
    /// RGBA pixels, rows top to bottom. The caller has checked the pixel budget.
    static func decode(_ reader: RasterByteReader, layout: BMPLayout) throws(RasterDecodingError) -> [UInt8] {
        let width = layout.width, height = layout.height
        let isFourBit = layout.compression == .runLength4
        let palette = layout.paletteRGB(reader)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        let failure: RasterDecodingError? = out.withUnsafeMutableBufferPointer { out in
            let source = reader.bytes, end = reader.count
            var position = layout.pixelOffset, x = 0, y = 0

            // Writes palette index `index` at (x, y), then advances x; (x, y) is inside the image.
            func put(_ index: Int) -> Bool {
                guard index < layout.paletteCount else { return false }
                let target = ((height - 1 - y) * width + x) * 4
                out[target] = palette[index * 3]
                out[target + 1] = palette[index * 3 + 1]
                out[target + 2] = palette[index * 3 + 2]
                out[target + 3] = 255
                x += 1
                return true
            }

            while true {
                guard position >= 0, end - position >= 2 else { return .truncated }
                let count = Int(source[position]), code = Int(source[position + 1])
                position += 2
                if count > 0 {  // an encoded run of `count` pixels
                    guard x + count <= width, y < height else {
                        return .corrupt("RLE run past the end of a row or of the image")
                    }
                    for k in 0..<count {
                        let index = isFourBit ? (k & 1 == 0 ? code >> 4 : code & 15) : code
                        guard put(index) else { return .corrupt("palette index out of range") }
                    }
                } else if code == 0 {  // end of line
                    x = 0
                    y += 1
                } else if code == 1 {  // end of bitmap
                    break
                } else if code == 2 {  // delta
                    guard end - position >= 2 else { return .truncated }
                    x += Int(source[position])
                    y += Int(source[position + 1])
                    position += 2
                    guard x <= width, y <= height else { return .corrupt("RLE delta past the image") }
                } else {  // a literal run of `code` pixels, padded to 2 bytes
                    let byteCount = isFourBit ? (code + 1) / 2 : code
                    guard end - position >= byteCount else { return .truncated }
                    guard x + code <= width, y < height else {
                        return .corrupt("RLE literal run past the end of a row or of the image")
                    }
                    for k in 0..<code {
                        let index: Int
                        if isFourBit {
                            let byte = Int(source[position + k / 2])
                            index = k & 1 == 0 ? byte >> 4 : byte & 15
                        } else {
                            index = Int(source[position + k])
                        }
                        guard put(index) else { return .corrupt("palette index out of range") }
                    }
                    position += byteCount + (byteCount & 1)
                }
                if y > height || (y == height && x > 0) { return .corrupt("RLE data past the last row") }
            }
            return nil
        }
        if let failure { throw failure }
        return out
    }
}
