import Foundation

/// What an image file's header says, read without decoding a pixel: the stored size, the
/// orientation it declares, and the name of its embedded colour profile.
///
/// Built for hostile bytes like the other metadata readers: every read is bounds-checked and every
/// walk moves forward; a damaged or unknown header gives `nil` fields, never a crash or a loop.
/// Sizes: PNG `IHDR`, GIF's logical screen, JPEG's first `SOFn`, WebP's `VP8 `/`VP8L`/`VP8X`,
/// AVIF/HEIF's largest `ispe` item property (the primary image, or the grid it is tiled from) and
/// its `irot` rotation; TIFF's first IFD (and its Orientation), BMP's DIB header, an icon's largest
/// entry, JPEG XL's SizeHeader (and its codestream orientation).
struct ImageHeader: Sendable, Hashable {
    /// The size the pixels are stored at, before the orientation is applied.
    var storedSize: PixelSize?
    /// The EXIF orientation (JPEG, PNG `eXIf`, WebP `EXIF`); ``ImageOrientation/up`` when none is declared.
    var orientation: ImageOrientation = .up
    /// Whether a container rotation (AVIF/HEIF `irot` of 90° or 270°) swaps the displayed sides.
    var containerSwapsSides = false

    /// The size as displayed: sides swapped for orientations 5–8 and quarter-turn rotations.
    var uprightSize: PixelSize? {
        guard let size = storedSize else { return nil }
        return orientation.swapsDimensions != containerSwapsSides ? PixelSize(width: size.height, height: size.width) : size
    }

    init(data: Data) {
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            switch ImageFormat(sniffing: data) {
            case .png: storedSize = Self.pngSize(bytes)
            case .gif: storedSize = Self.gifSize(bytes)
            case .jpeg: storedSize = Self.jpegSize(bytes)
            case .webp: storedSize = Self.webpSize(bytes)
            case .avif, .heic, .heif:
                (storedSize, containerSwapsSides) = Self.isobmffSize(bytes)
            case .tiff:
                let (size, value) = Self.tiffHeader(raw)
                storedSize = size
                orientation = value.map(ImageOrientation.init(exifValue:)) ?? .up
            case .jxl:
                let (size, value) = Self.jxlHeader(raw)
                storedSize = size
                orientation = value.map(ImageOrientation.init(exifValue:)) ?? .up
            case .bmp: storedSize = Self.bmpSize(raw)
            case .ico: storedSize = Self.icoSize(raw)
            default: break
            }
            if let tiff = EXIFBlock.tiff(in: raw), let value = EXIFOrientationReader.orientationValue(inTIFF: tiff) {
                orientation = ImageOrientation(exifValue: value)
            }
        }
    }

    private static func size(_ width: Int, _ height: Int) -> PixelSize? {
        width > 0 && height > 0 ? PixelSize(width: width, height: height) : nil
    }

    private static func bigEndian(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int, _ count: Int) -> Int {
        bytes[index..<(index + count)].reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: UnsafeBufferPointer<UInt8>, _ index: Int, _ count: Int) -> Int {
        bytes[index..<(index + count)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// The signature, then `IHDR` first: width and height, 4 bytes each, big-endian.
    static func pngSize(_ bytes: UnsafeBufferPointer<UInt8>) -> PixelSize? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        return size(bigEndian(bytes, 16, 4), bigEndian(bytes, 20, 4))
    }

    /// `GIF8?a`, then the logical screen's width and height, 2 bytes each, little-endian.
    static func gifSize(_ bytes: UnsafeBufferPointer<UInt8>) -> PixelSize? {
        guard bytes.count >= 10 else { return nil }
        return size(littleEndian(bytes, 6, 2), littleEndian(bytes, 8, 2))
    }

    /// The segments up to the first start-of-frame (`SOF0`–`SOF15` but `DHT`, `JPG`, `DAC`):
    /// precision, then height and width, 2 bytes each. Bytes between segments are skipped up to
    /// the next `0xFF`, as libjpeg skips them (a wrong segment length leaves the walk in the
    /// middle of a segment; the scan goes on to the next marker).
    static func jpegSize(_ bytes: UnsafeBufferPointer<UInt8>) -> PixelSize? {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var index = 2
        while index + 1 < bytes.count {
            guard bytes[index] == 0xFF else { index += 1; continue }
            while index + 1 < bytes.count && bytes[index + 1] == 0xFF { index += 1 }
            guard index + 1 < bytes.count else { return nil }
            let marker = bytes[index + 1]
            if marker == 0x00 || marker == 0x01 || marker == 0xD8 || (0xD0...0xD7).contains(marker) { index += 2; continue }
            if marker == 0xDA || marker == 0xD9 { return nil }
            guard index + 4 <= bytes.count else { return nil }
            let length = bigEndian(bytes, index + 2, 2)
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                guard length >= 7, index + 9 <= bytes.count else { return nil }
                return size(bigEndian(bytes, index + 7, 2), bigEndian(bytes, index + 5, 2))
            }
            guard length >= 2 else { index += 2; continue }
            index += 2 + length
        }
        return nil
    }

    /// `RIFF....WEBP`, then the first chunk: `VP8X` (canvas − 1, 3 bytes each), `VP8L` (14 bits
    /// each, minus one, after the 0x2F signature) or `VP8 ` (14 bits each after the key frame's start code).
    static func webpSize(_ bytes: UnsafeBufferPointer<UInt8>) -> PixelSize? {
        guard bytes.count >= 25 else { return nil }
        switch String(decoding: bytes[12..<16], as: UTF8.self) {
        case "VP8X":
            guard bytes.count >= 30 else { return nil }
            return size(littleEndian(bytes, 24, 3) + 1, littleEndian(bytes, 27, 3) + 1)
        case "VP8L":
            guard bytes[20] == 0x2F else { return nil }
            let bits = littleEndian(bytes, 21, 4)
            return size((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
        case "VP8 ":
            guard bytes.count >= 30, bytes[23] == 0x9D, bytes[24] == 0x01, bytes[25] == 0x2A else { return nil }
            return size(littleEndian(bytes, 26, 2) & 0x3FFF, littleEndian(bytes, 28, 2) & 0x3FFF)
        default:
            return nil
        }
    }

    /// `meta` → `pitm` (the primary item) → `iprp`/`ipma` (its properties) → `ipco`: the primary
    /// item's `ispe`, cut to its clean aperture (`clap`) when it has one, and whether its `irot`
    /// turns it a quarter. Without `pitm` or `ipma`, the largest `ispe`.
    static func isobmffSize(_ bytes: UnsafeBufferPointer<UInt8>) -> (PixelSize?, Bool) {
        guard let meta = box("meta", in: bytes, 0..<bytes.count), meta.count >= 4 else { return (nil, false) }
        let children = (meta.lowerBound + 4)..<meta.upperBound   // meta is a full box
        guard let iprp = box("iprp", in: bytes, children), let ipco = box("ipco", in: bytes, iprp) else { return (nil, false) }
        var properties: [(type: String, payload: Range<Int>)] = []
        var boxes = ISOBoxes(UnsafeRawBufferPointer(bytes), in: ipco)
        while let box = boxes.next(), properties.count < 4096 {
            properties.append((String(decoding: bytes[(box.start + 4)..<(box.start + 8)], as: UTF8.self), box.body))
        }
        var chosen = properties.indices.map { $0 }
        if let primary = primaryItem(bytes, children), let ipma = box("ipma", in: bytes, iprp),
           let associated = associations(of: primary, in: bytes, ipma) {
            chosen = associated.filter { properties.indices.contains($0) }
        }
        var largest: PixelSize?
        var cleanAperture: PixelSize?
        var quarterTurn = false
        for (type, payload) in chosen.map({ properties[$0] }) {
            let start = payload.lowerBound
            switch type {
            case "ispe" where payload.count >= 12:
                if let found = size(bigEndian(bytes, start + 4, 4), bigEndian(bytes, start + 8, 4)),
                   found.width * found.height > (largest.map { $0.width * $0.height } ?? 0) {
                    largest = found
                }
            case "clap" where payload.count >= 16 && cleanAperture == nil:
                let (widthD, heightD) = (bigEndian(bytes, start + 4, 4), bigEndian(bytes, start + 12, 4))
                if widthD > 0, heightD > 0 { cleanAperture = size(bigEndian(bytes, start, 4) / widthD, bigEndian(bytes, start + 8, 4) / heightD) }
            case "irot" where payload.count >= 1:
                quarterTurn = bytes[start] & 1 == 1
            default:
                break
            }
        }
        return (cleanAperture ?? largest, quarterTurn)
    }

    /// `pitm`'s item ID (16 bits in version 0, 32 in version 1).
    private static func primaryItem(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        guard let pitm = box("pitm", in: bytes, range), pitm.count >= 6 else { return nil }
        return bytes[pitm.lowerBound] == 0 ? bigEndian(bytes, pitm.lowerBound + 4, 2)
            : pitm.count >= 8 ? bigEndian(bytes, pitm.lowerBound + 4, 4) : nil
    }

    /// The 0-based `ipco` indices `ipma` associates with `item` (its indices are 1-based; 0 means none).
    private static func associations(of item: Int, in bytes: UnsafeBufferPointer<UInt8>, _ ipma: Range<Int>) -> [Int]? {
        guard ipma.count >= 8 else { return nil }
        let version = bytes[ipma.lowerBound], wideIndices = bytes[ipma.lowerBound + 3] & 1 == 1
        var index = ipma.lowerBound + 8
        for _ in 0..<min(bigEndian(bytes, ipma.lowerBound + 4, 4), 65536) {
            let idSize = version < 1 ? 2 : 4
            guard index + idSize + 1 <= ipma.upperBound else { return nil }
            let id = bigEndian(bytes, index, idSize)
            let count = Int(bytes[index + idSize])
            index += idSize + 1
            let entrySize = wideIndices ? 2 : 1
            guard index + count * entrySize <= ipma.upperBound else { return nil }
            if id == item {
                return (0..<count).compactMap { k in
                    let value = bigEndian(bytes, index + k * entrySize, entrySize) & (wideIndices ? 0x7FFF : 0x7F)
                    return value > 0 ? value - 1 : nil
                }
            }
            index += count * entrySize
        }
        return nil
    }

    /// The payload range of the first box of `type` among the boxes that fill `range` (``ISOBoxes``).
    private static func box(_ type: StaticString, in bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int>? {
        ISOBoxes.first(type, in: UnsafeRawBufferPointer(bytes), range)
    }
}
