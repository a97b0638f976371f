/// A simple ICO writer: one directory entry per image given, its data (a PNG file, or an icon DIB from
/// `BMPEncoding.iconDIB`) stored as is, in order, after the directory.
enum ICOEncoding {
    /// One image of the icon, already encoded.
    struct Image: Sendable, Equatable {
        /// Pixel size; the directory stores 1...255 as is and 256 or more as 0 (= 256).
        var width: Int
        var height: Int
        /// Bits per pixel of the data (32 for BGRA DIBs and RGBA PNGs).
        var bitCount: Int
        /// The PNG file or the DIB (without a BMP file header).
        var data: [UInt8]
        var isPNG: Bool

        init(width: Int, height: Int, bitCount: Int, data: [UInt8], isPNG: Bool) {
            self.width = width
            self.height = height
            self.bitCount = bitCount
            self.data = data
            self.isPNG = isPNG
        }
    }

    /// An ICO file (type 1) holding `images` in order. Empty when there are no images, more than 65535, an
    /// image with no data or a size ≤ 0, or when the file would pass 4 GiB (offsets are 32-bit).
    static func encode(images: [Image]) -> [UInt8] {
        guard !images.isEmpty, images.count <= 0xFFFF,
              images.allSatisfy({ !$0.data.isEmpty && $0.width > 0 && $0.height > 0 }) else { return [] }
        let directorySize = 6 + 16 * images.count
        var total = directorySize
        for image in images {
            guard image.data.count <= Int(UInt32.max) - total else { return [] }
            total += image.data.count
        }
        var out: [UInt8] = []
        out.reserveCapacity(total)
        out.appendLittleEndian(bytes: 2, 0)  // reserved
        out.appendLittleEndian(bytes: 2, 1)  // icon
        out.appendLittleEndian(bytes: 2, images.count)
        var offset = directorySize
        for image in images {
            out.append(image.width >= 256 ? 0 : UInt8(image.width))
            out.append(image.height >= 256 ? 0 : UInt8(image.height))
            out.append(image.bitCount < 8 && image.bitCount > 0 ? UInt8(1 << image.bitCount) : 0)  // colours
            out.append(0)  // reserved
            out.appendLittleEndian(bytes: 2, 1)  // planes
            out.appendLittleEndian(bytes: 2, max(0, min(image.bitCount, 0xFFFF)))
            out.appendLittleEndian(bytes: 4, image.data.count)
            out.appendLittleEndian(bytes: 4, offset)
            offset += image.data.count
        }
        for image in images { out += image.data }
        return out
    }
}
