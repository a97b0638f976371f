/// The headers of TIFF, BMP, ICO and JPEG XL, read without decoding a pixel (as the other formats' in
/// ``ImageHeader``): every read bounds-checked, a damaged header gives `nil`.
extension ImageHeader {
    /// A classic TIFF's first IFD: ImageWidth (256), ImageLength (257) and Orientation (274). BigTIFF gives `nil`.
    static func tiffHeader(_ raw: UnsafeRawBufferPointer) -> (PixelSize?, Int?) {
        guard let reader = TIFFReader(tiff: raw) else { return (nil, nil) }
        let width = reader.ifd0Entry(tag: 256).flatMap(reader.firstInteger(ofEntryAt:)) ?? 0
        let height = reader.ifd0Entry(tag: 257).flatMap(reader.firstInteger(ofEntryAt:)) ?? 0
        let orientation = reader.ifd0Entry(tag: 274).flatMap(reader.firstInteger(ofEntryAt:))
        return (width > 0 && height > 0 ? PixelSize(width: width, height: height) : nil, orientation)
    }

    /// `BM`, then the DIB header: OS/2 1.x (12 bytes) has 16-bit sides, every later one 32-bit (the height
    /// negative for top-down rows).
    static func bmpSize(_ raw: UnsafeRawBufferPointer) -> PixelSize? {
        guard raw.count >= 26 else { return nil }
        let headerSize = raw.littleEndian(at: 14, count: 4)
        if headerSize == 12 { return PixelSize(width: raw.littleEndian(at: 18, count: 2), height: raw.littleEndian(at: 20, count: 2)) }
        guard headerSize >= 16, raw.count >= 26 else { return nil }
        let width = Int(Int32(truncatingIfNeeded: raw.littleEndian(at: 18, count: 4)))
        let height = Int(Int32(truncatingIfNeeded: raw.littleEndian(at: 22, count: 4)))
        guard width > 0, height != 0, height != Int(Int32.min) else { return nil }
        return PixelSize(width: width, height: abs(height))
    }

    /// The largest entry of an icon's directory (a 0 side meaning 256), as ``ICOCoder`` picks it.
    static func icoSize(_ raw: UnsafeRawBufferPointer) -> PixelSize? {
        guard raw.count >= 6 else { return nil }
        let count = raw.littleEndian(at: 4, count: 2)
        var largest: PixelSize?
        for index in 0..<count {
            let entry = 6 + index * 16
            guard entry + 16 <= raw.count else { break }
            let size = PixelSize(width: raw[entry] == 0 ? 256 : Int(raw[entry]), height: raw[entry + 1] == 0 ? 256 : Int(raw[entry + 1]))
            if size.pixelCount > (largest?.pixelCount ?? 0) { largest = size }
        }
        return largest
    }

    /// A JPEG XL codestream's SizeHeader and the orientation of its ImageMetadata (ISO/IEC 18181-1 §D.2,
    /// §D.3), bare (`FF 0A`) or in the container's `jxlc` box or first `jxlp` box.
    static func jxlHeader(_ raw: UnsafeRawBufferPointer) -> (PixelSize?, Int?) {
        var start = 0
        if !(raw.count >= 2 && raw[0] == 0xFF && raw[1] == 0x0A) {
            var boxes = ISOBoxes(raw)
            start = -1
            while let box = boxes.next() {
                if boxes.type(of: box, is: "jxlc") { start = box.body.lowerBound; break }
                if boxes.type(of: box, is: "jxlp") { start = box.body.lowerBound + 4; break }
            }
            guard start >= 0, start + 2 <= raw.count, raw[start] == 0xFF, raw[start + 1] == 0x0A else { return (nil, nil) }
        }
        var bits = JXLBitReader(raw, from: start + 2)
        func dimension() -> Int? {
            guard let selector = bits.read(2) else { return nil }
            return bits.read([9, 13, 18, 30][selector]).map { $0 + 1 }
        }
        guard let small = bits.read(1) else { return (nil, nil) }
        let height: Int
        if small == 1 {
            guard let value = bits.read(5) else { return (nil, nil) }
            height = (value + 1) * 8
        } else {
            guard let value = dimension() else { return (nil, nil) }
            height = value
        }
        guard let ratio = bits.read(3) else { return (nil, nil) }
        let width: Int
        if ratio != 0 {
            let (numerator, denominator) = [(1, 1), (12, 10), (4, 3), (3, 2), (16, 9), (5, 4), (2, 1)][ratio - 1]
            width = height * numerator / denominator
        } else if small == 1 {
            guard let value = bits.read(5) else { return (nil, nil) }
            width = (value + 1) * 8
        } else {
            guard let value = dimension() else { return (nil, nil) }
            width = value
        }
        // ImageMetadata: all_default, then extra_fields, then the orientation minus one in 3 bits.
        var orientation: Int?
        if let allDefault = bits.read(1) {
            orientation = 1
            if allDefault == 0, let extraFields = bits.read(1), extraFields == 1 { orientation = bits.read(3).map { $0 + 1 } }
        }
        return (PixelSize(width: width, height: height), orientation)
    }
}

/// JPEG XL's bit order: least significant bit of each byte first.
struct JXLBitReader {
    private let bytes: UnsafeRawBufferPointer
    private var position: Int

    init(_ bytes: UnsafeRawBufferPointer, from byteOffset: Int) {
        self.bytes = bytes
        position = byteOffset * 8
    }

    /// The next `count` bits (at most 32) as an unsigned value, or `nil` past the end.
    mutating func read(_ count: Int) -> Int? {
        guard position + count <= bytes.count * 8 else { return nil }
        var value = 0
        for bit in 0..<count {
            let index = position + bit
            value |= Int((bytes[index / 8] >> UInt8(index % 8)) & 1) << bit
        }
        position += count
        return value
    }
}
