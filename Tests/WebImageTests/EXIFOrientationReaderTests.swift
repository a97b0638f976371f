import Foundation
import Testing
@testable import WebImage

@Suite struct EXIFOrientationReaderTests {
    /// A TIFF structure whose IFD0 holds `entries` (tag, type, count, 4 value bytes as stored).
    static func tiff(bigEndian: Bool, ifdOffset: UInt32 = 8, entryCount: UInt16? = nil,
                     entries: [(tag: UInt16, type: UInt16, count: UInt32, value: UInt32)]) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
        func u32(_ v: UInt32) -> [UInt8] {
            let bytes = [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
            return bigEndian ? bytes : bytes.reversed()
        }
        var bytes: [UInt8] = bigEndian ? [0x4D, 0x4D] : [0x49, 0x49]
        bytes += u16(42) + u32(ifdOffset)
        bytes += u16(entryCount ?? UInt16(entries.count))
        for entry in entries {
            bytes += u16(entry.tag) + u16(entry.type) + u32(entry.count)
            // A SHORT value sits in the first two bytes of the value field.
            bytes += entry.type == 3 && entry.count == 1 ? u16(UInt16(entry.value)) + [0, 0] : u32(entry.value)
        }
        return bytes + u32(0) // no next IFD
    }

    /// A JPEG header: SOI, the given segments (marker, payload), then SOS.
    static func jpeg(_ segments: [(marker: UInt8, payload: [UInt8])]) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        for segment in segments {
            let length = segment.payload.count + 2
            bytes += [0xFF, segment.marker, UInt8(length >> 8), UInt8(length & 0xFF)] + segment.payload
        }
        return bytes + [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
    }

    static let exif: [UInt8] = Array("Exif".utf8) + [0, 0]

    static func orientation(_ tiff: [UInt8], before: [(marker: UInt8, payload: [UInt8])] = []) -> ImageOrientation {
        EXIFOrientationReader.orientation(inJPEG: jpeg(before + [(0xE1, exif + tiff)]))
    }

    @Test(arguments: [false, true])
    func readsTheOrientationTagInEitherByteOrder(bigEndian: Bool) {
        for value in 1...8 {
            let tiff = Self.tiff(bigEndian: bigEndian, entries: [(0x010F, 2, 4, 0x4142_4300), (0x0112, 3, 1, UInt32(value))])
            #expect(Self.orientation(tiff) == ImageOrientation(rawValue: value), "value \(value), big-endian \(bigEndian)")
        }
    }

    @Test func zeroMissingAndOutOfRangeValuesMeanUp() {
        #expect(Self.orientation(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 0)])) == .up)
        #expect(Self.orientation(Self.tiff(bigEndian: true, entries: [(0x0112, 3, 1, 9)])) == .up)
        #expect(Self.orientation(Self.tiff(bigEndian: true, entries: [(0x0110, 3, 1, 6)])) == .up)
        #expect(EXIFOrientationReader.orientation(inJPEG: Self.jpeg([])) == .up)
        #expect(EXIFOrientationReader.orientation(inJPEG: []) == .up)
    }

    @Test func findsEXIFAfterOtherSegmentsAndIgnoresNonEXIFAPP1() {
        let xmp = Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>".utf8)
        let jfif: [UInt8] = Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        let tiff = Self.tiff(bigEndian: true, entries: [(0x0112, 3, 1, 6)])
        #expect(Self.orientation(tiff, before: [(0xE0, jfif), (0xE1, xmp), (0xFE, Array("comment".utf8))]) == .right)
    }

    @Test func stopsAtTheFirstScan() {
        var bytes = Self.jpeg([])
        let tiff = Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 3)])
        bytes += [0xFF, 0xE1, 0x00, UInt8(Self.exif.count + tiff.count + 2)] + Self.exif + tiff
        #expect(EXIFOrientationReader.orientation(inJPEG: bytes) == .up)
    }

    @Test func toleratesFillBytesAndExtraneousBytesBeforeMarkers() {
        let tiff = Self.tiff(bigEndian: false, entries: [(0x0112, 3, 1, 8)])
        let good = Self.jpeg([(0xE1, Self.exif + tiff)])
        let padded = Array(good[0..<2]) + [0x00, 0x13, 0xFF, 0xFF] + Array(good[2...])
        #expect(EXIFOrientationReader.orientation(inJPEG: padded) == .left)
    }

    @Test func readsLongAndOutOfLineValuesButNotOtherTypes() {
        #expect(Self.orientation(Self.tiff(bigEndian: true, entries: [(0x0112, 4, 1, 5)])) == .leftMirrored)
        #expect(Self.orientation(Self.tiff(bigEndian: true, entries: [(0x0112, 2, 1, 0x3600_0000)])) == .up) // ASCII "6"
        // A SHORT array too long for the entry lives at an offset: after the IFD (8 + 2 + 12 + 4 bytes).
        let outOfLine = Self.tiff(bigEndian: false, entries: [(0x0112, 3, 3, 26)]) + [6, 0, 6, 0, 6, 0]
        #expect(Self.orientation(outOfLine) == .right)
        #expect(Self.orientation(Self.tiff(bigEndian: false, entries: [(0x0112, 3, 3, 2)])) == .up) // 42 at offset 2
    }

    @Test func hostileStructuresNeverCrashOrLoop() {
        let e = Self.exif
        // IFD offsets that point past the end, into the header, or at themselves.
        for offset: UInt32 in [0, 2, 4, 7, 9, 1000, 0xFFFF_FFFF] {
            _ = Self.orientation(Self.tiff(bigEndian: true, ifdOffset: offset, entries: [(0x0112, 3, 1, 6)]))
        }
        // An entry count far beyond the data.
        #expect(Self.orientation(Self.tiff(bigEndian: false, entryCount: 0xFFFF, entries: [(0x0100, 3, 1, 1)])) == .up)
        // Value counts and offsets out of range.
        #expect(Self.orientation(Self.tiff(bigEndian: true, entries: [(0x0112, 3, 0xFFFF_FFFF, 0xFFFF_FFF0)])) == .up)
        #expect(Self.orientation(Self.tiff(bigEndian: true, entries: [(0x0112, 3, 0, 6)])) == .up)
        // Not TIFF, wrong magic, truncated headers.
        #expect(Self.orientation(Array("XX".utf8) + [0, 42, 0, 0, 0, 8]) == .up)
        #expect(Self.orientation([0x4D, 0x4D, 0, 43, 0, 0, 0, 8, 0, 0]) == .up)
        #expect(Self.orientation([0x4D, 0x4D, 0]) == .up)
        #expect(EXIFOrientationReader.orientation(inJPEG: [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x02]) == .up)
        #expect(EXIFOrientationReader.orientation(inJPEG: [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF] + e) == .up) // length past the end
        #expect(EXIFOrientationReader.orientation(inJPEG: [0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x00] + e) == .up) // length < 2
        #expect(EXIFOrientationReader.orientation(inJPEG: [0xFF, 0xD8] + [UInt8](repeating: 0xFF, count: 1000)) == .up)
    }

    @Test func randomBytesNeverCrash() {
        var generator = SplitMix(seed: 0x5EED)
        let tiff = Self.tiff(bigEndian: true, entries: [(0x0112, 3, 1, 6), (0x0100, 4, 1, 640)])
        let base = Self.jpeg([(0xE1, Self.exif + tiff)])
        for _ in 0..<5000 {
            var bytes = base
            for _ in 0..<Int(generator.next() % 8 + 1) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            let cut = Int(generator.next() % UInt64(bytes.count + 1))
            _ = EXIFOrientationReader.orientation(inJPEG: Array(bytes.prefix(cut)))
        }
        for _ in 0..<2000 {
            let random = (0..<Int(generator.next() % 200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            _ = EXIFOrientationReader.orientation(inJPEG: [0xFF, 0xD8, 0xFF, 0xE1, 0, UInt8(random.count + 8)] + Self.exif + random)
        }
    }

    @Test func readsTheOrientationEveryCorpusJPEGDeclares() throws {
        var mismatches: [String] = []
        for entry in Corpus.entries(format: "JPEG") {
            let read = try entry.data.withUnsafeBytes { EXIFOrientationReader.orientation(inJPEG: $0) }
            let expected = ImageOrientation(exifValue: entry.exifOrientation ?? 1)
            if read != expected { mismatches.append("\(entry.path): read \(read), manifest \(entry.exifOrientation.map(String.init) ?? "-")") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test func anEXIFBlockIsReadWithOrWithoutItsAPP1Prefix() {
        // A big-endian TIFF with one IFD0 entry: Orientation (0x0112), SHORT, 1 value, 6.
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, 0x00, 0x01,
                             0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        #expect(ImageOrientation(exif: Data(tiff)) == .right)
        #expect(ImageOrientation(exif: Data(Array("Exif".utf8) + [0, 0] + tiff)) == .right)
        #expect(ImageOrientation(exif: Data([1, 2, 3])) == .up)
    }
}
