import Foundation
import Testing
@testable import WebImage

/// The libdeflate fast path of PNG decoding: it takes the common files, gives libpng's pixels byte for
/// byte, and leaves everything libpng would report (or treat differently) to libpng.
@Suite struct PNGFastDecoderTests {
    /// libpng's decode of a whole file: the reference the fast path must equal.
    static func libpngImage(_ data: Data) throws -> Image {
        try data.withUnsafeBytes { bytes in
            let session = try PNGDecodeSession(pixelCountLimit: .max, zeroFillsOutput: false)
            guard try session.feed(bytes), let image = session.makeImage(scale: 1) else { throw ImageCodingError.truncatedData(format: .png) }
            return image
        }
    }

    static func fastImage(_ data: Data, pixelCountLimit: Int = .max) throws -> Image? {
        data.withUnsafeBytes { PNGFastDecoder.decode($0, pixelCountLimit: pixelCountLimit, scale: 1) }
    }

    static func samePixels(_ a: Image, _ b: Image) -> Bool {
        guard a.size == b.size, a.pixelFormat == b.pixelFormat else { return false }
        return (0..<a.height).allSatisfy { row in
            a.withUnsafeRow(row) { r1 in b.withUnsafeRow(row) { r2 in r1.elementsEqual(r2) } }
        }
    }

    @Test func everyCorpusPNGItTakesDecodesToLibpngsPixels() async throws {
        let entries = Corpus.entries(format: "PNG")
        let (taken, declined, mismatches) = try await offThePool { () -> (Int, Int, [String]) in
            var taken = 0, declined = 0
            var mismatches: [String] = []
            for entry in entries {
                guard let data = try? entry.data, let fast = try Self.fastImage(data) else { declined += 1; continue }
                taken += 1
                do {
                    if !Self.samePixels(fast, try Self.libpngImage(data)) { mismatches.append("\(entry.path): pixels differ") }
                } catch {
                    mismatches.append("\(entry.path): the fast path decoded what libpng refuses (\(error))")
                }
            }
            return (taken, declined, mismatches)
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
        #expect(taken >= 40, "the fast path took only \(taken) corpus files")
        #expect(declined >= 40, "the fast path declined only \(declined) corpus files (palettes, 16-bit, interlaced, damaged)")
    }

    @Test(arguments: [1, 2, 3, 4])
    func everyFilterTypeUnfiltersAsLibpngDoes(channels: Int) throws {
        var random = SplitMix(seed: UInt64(channels))
        let png = CraftedPNG(width: 37, height: 23, channels: channels, random: &random)
        let data = png.file(idatChunks: 3)
        let fast = try #require(try Self.fastImage(data), "a plain 8-bit file must take the fast path")
        #expect(Self.samePixels(fast, try Self.libpngImage(data)))
        #expect(Self.samePixels(try PNGCoder().decode(data, options: DecodeOptions(applyOrientation: false)), fast))
    }

    @Test func whatLibpngReportsIsLeftToLibpng() throws {
        var random = SplitMix(seed: 7)
        let png = CraftedPNG(width: 40, height: 30, channels: 3, random: &random)
        #expect(try Self.fastImage(png.file()) != nil)

        // Each of these must be declined; then PNGCoder's verdict is libpng's.
        var badFilter = png
        badFilter.rows[5][0] = 5
        var smallWindow = png
        smallWindow.windowCode = 6
        var shortStream = png
        shortStream.rows.removeLast()
        let cases: [(String, Data, Bool)] = [   // name, file, whether libpng decodes it
            ("filter type 5", badFilter.file(), false),
            ("a 16 KiB window", smallWindow.file(), true),
            ("a row missing", shortStream.file(), false),
            ("data after the zlib stream", png.file(trailingStreamBytes: 3), true),
            ("an IDAT CRC error", png.file(corruptsIDATCRC: true), false),
            ("a damaged Adler-32", png.file(corruptsAdler: true), false),
            ("a tRNS chunk", png.file(extraChunks: [("tRNS", Data([0, 1, 0, 2, 0, 3]))]), true),
            ("IDATs split by another chunk", png.file(idatChunks: 2, chunkBetweenIDATs: ("tEXt", Data("a\0b".utf8))), false),
            ("an unknown critical chunk", png.file(extraChunks: [("ABCD", Data([1]))]), false),
        ]
        for (name, data, libpngDecodes) in cases {
            #expect(try Self.fastImage(data) == nil, "\(name): the fast path must decline")
            do {
                let image = try PNGCoder().decode(data, options: DecodeOptions(applyOrientation: false))
                #expect(libpngDecodes, "\(name): decoded, but libpng refuses it")
                #expect(Self.samePixels(image, try Self.libpngImage(data)), "\(name)")
            } catch {
                #expect(!libpngDecodes, "\(name): \(error)")
                #expect(throws: ImageCodingError.self) { try Self.libpngImage(data) }
            }
        }
        // Ancillary chunks are skipped, as libpng skips them.
        let annotated = png.file(extraChunks: [("tEXt", Data("Title\0x".utf8)), ("pHYs", Data(count: 9))])
        #expect(Self.samePixels(try #require(try Self.fastImage(annotated)), try Self.libpngImage(annotated)))
    }

    /// The one documented difference (png_fast.c): libdeflate inflates deflate data no encoder writes
    /// that zlib refuses, here a fixed-Huffman length symbol 286 (zlib: "invalid literal/length code";
    /// libdeflate: length 258). libpng refuses the file; the full decode gives its pixels; the
    /// incremental decoder, fed whole or byte by byte, ends exactly as the full decode.
    @Test func aStreamOnlyLibdeflateAcceptsEndsTheSameWholeOrInPieces() throws {
        var bits = BitWriter()
        bits.write(1, count: 1)                     // BFINAL
        bits.write(1, count: 2)                     // BTYPE 01: fixed Huffman
        bits.writeCode(0b0011_0000, length: 8)      // literal 0
        bits.writeCode(0b1100_0110, length: 8)      // length symbol 286
        bits.writeCode(0, length: 5)                // distance code 0: distance 1
        bits.writeCode(0, length: 7)                // end of block
        let adler: UInt32 = 259 << 16 | 1           // 259 zero bytes: a = 1, b = 259
        let stream = [0x78, 0x01] + bits.bytes + CraftedPNG.bigEndian(adler)
        var file = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        file += CraftedPNG.chunk("IHDR", CraftedPNG.bigEndian(258) + CraftedPNG.bigEndian(1) + [8, 0, 0, 0, 0])
        file += CraftedPNG.chunk("IDAT", stream)
        file += CraftedPNG.chunk("IEND", [])

        #expect(throws: ImageCodingError.self) { try Self.libpngImage(file) }
        let full = try PNGCoder().decode(file, options: DecodeOptions(applyOrientation: false))
        #expect(full.size == PixelSize(width: 258, height: 1) && full.pixels == Data(count: 258))
        for chunking in [file.count, 1] {
            let decoder = PNGCoder().makeIncrementalDecoder(options: DecodeOptions(applyOrientation: false))
            var offset = 0
            while offset < file.count {
                try decoder.append(file[offset..<min(offset + chunking, file.count)])
                offset += chunking
            }
            #expect(Self.samePixels(try decoder.finish(), full), "in pieces of \(chunking)")
        }
    }

    /// Bits packed as deflate packs them: values from their lowest bit, Huffman codes from their highest.
    struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private var used = 8

        mutating func write(_ value: UInt32, count: Int) {
            for bit in 0..<count { append(bit: (value >> bit) & 1) }
        }

        mutating func writeCode(_ code: UInt32, length: Int) {
            for bit in (0..<length).reversed() { append(bit: (code >> bit) & 1) }
        }

        private mutating func append(bit: UInt32) {
            if used == 8 {
                bytes.append(0)
                used = 0
            }
            bytes[bytes.count - 1] |= UInt8(bit) << used
            used += 1
        }
    }

    @Test func theSizeLimitIsLibpngsToReport() throws {
        var random = SplitMix(seed: 3)
        let data = CraftedPNG(width: 20, height: 20, channels: 4, random: &random).file()
        #expect(try Self.fastImage(data, pixelCountLimit: 399) == nil)
        #expect(throws: ImageCodingError.imageTooLarge(width: 20, height: 20, limit: 399)) {
            try PNGCoder().decode(data, options: DecodeOptions(pixelCountLimit: 399))
        }
    }
}

/// A PNG built by hand, so that a test can choose every filter byte and damage any part: stored
/// (uncompressed) deflate blocks in a zlib stream, rows cycling through the five filter types.
struct CraftedPNG {
    let width: Int
    let height: Int
    let channels: Int
    /// Each row: its filter byte, then width × channels bytes.
    var rows: [[UInt8]]
    /// The zlib header's CINFO (window 2^(CINFO + 8)).
    var windowCode: UInt8 = 7

    init(width: Int, height: Int, channels: Int, random: inout SplitMix) {
        self.width = width
        self.height = height
        self.channels = channels
        rows = (0..<height).map { row in [UInt8(row % 5)] + (0..<width * channels).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
    }

    /// The zlib stream of the rows.
    func stream(trailingBytes: Int = 0, corruptsAdler: Bool = false) -> [UInt8] {
        let raw = rows.flatMap { $0 }
        let cmf = windowCode << 4 | 8
        var flg: UInt8 = 0
        while (Int(cmf) * 256 + Int(flg)) % 31 != 0 { flg += 1 }
        var out: [UInt8] = [cmf, flg]
        var offset = 0
        repeat {
            let count = min(65_535, raw.count - offset)
            let last: UInt8 = offset + count == raw.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += raw[offset..<offset + count]
            offset += count
        } while offset < raw.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in raw {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        var adler = b << 16 | a
        if corruptsAdler { adler ^= 1 }
        out += Self.bigEndian(adler)
        return out + [UInt8](repeating: 0xAA, count: trailingBytes)
    }

    /// The whole file, with the IDAT stream split into `idatChunks` chunks.
    func file(idatChunks: Int = 1, extraChunks: [(String, Data)] = [], chunkBetweenIDATs: (String, Data)? = nil,
              trailingStreamBytes: Int = 0, corruptsIDATCRC: Bool = false, corruptsAdler: Bool = false) -> Data {
        let colorType: UInt8 = [1: 0, 2: 4, 3: 2, 4: 6][channels]!
        var file = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        file += Self.chunk("IHDR", Self.bigEndian(UInt32(width)) + Self.bigEndian(UInt32(height)) + [8, colorType, 0, 0, 0])
        for (type, data) in extraChunks { file += Self.chunk(type, [UInt8](data)) }
        let stream = stream(trailingBytes: trailingStreamBytes, corruptsAdler: corruptsAdler)
        let size = (stream.count + idatChunks - 1) / idatChunks
        for index in 0..<idatChunks {
            let part = Array(stream[min(index * size, stream.count)..<min((index + 1) * size, stream.count)])
            var chunk = Self.chunk("IDAT", part)
            if corruptsIDATCRC && index == 0 { chunk[chunk.count - 1] ^= 0xFF }
            file += chunk
            if index == 0, let (type, data) = chunkBetweenIDATs { file += Self.chunk(type, [UInt8](data)) }
        }
        file += Self.chunk("IEND", [])
        return file
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> Data {
        let typed = Array(type.utf8) + data
        return Data(bigEndian(UInt32(data.count)) + typed + bigEndian(CRC32.checksum(typed)))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
