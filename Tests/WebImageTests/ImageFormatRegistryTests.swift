import Foundation
import Testing
@testable import WebImage

/// The format registry: one descriptor per format, read by sniffing, names, media types, negotiation and qualities.
@Suite struct ImageFormatRegistryTests {
    @Test func namesAndAliasesFindTheirFormat() {
        #expect(ImageFormat(named: "jpg") == .jpeg && ImageFormat(named: "JPEG") == .jpeg)
        #expect(ImageFormat(named: "tif") == .tiff && ImageFormat(named: "tiff") == .tiff)
        #expect(ImageFormat(named: "cur") == .ico && ImageFormat(named: "jxl") == .jxl && ImageFormat(named: "heic") == .heic)
        #expect(ImageFormat(named: "tga") == nil && ImageFormat(named: "") == nil)
        #expect(ImageFormat.jxl.mimeType == "image/jxl" && ImageFormat.jpeg.fileExtension == "jpg" && ImageFormat.tiff.fileExtension == "tiff")
        #expect(ImageFormat.unknown.mimeType == "application/octet-stream" && ImageFormat.unknown.fileExtension == nil)
    }

    @Test func jpegXLIsRecognisedAsACodestreamAndAsAContainer() {
        #expect(ImageFormat(sniffing: [0xFF, 0x0A, 0xFA, 0x7F]) == .jxl)
        #expect(ImageFormat(sniffing: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x20, 0x0D, 0x0A, 0x87, 0x0A, 0, 0, 0, 0x14]) == .jxl)
        #expect(ImageFormat(sniffing: [0, 0, 0, 0x0C, 0x4A, 0x58, 0x4C, 0x21, 0x0D, 0x0A, 0x87, 0x0A]) == .unknown)
        #expect(ImageFormat(sniffing: Array("II".utf8) + [0x2B, 0, 8, 0, 0, 0]) == .tiff, "BigTIFF")
    }

    @Test func negotiationFollowsImgproxysOrderAndQualitiesItsDefaults() {
        let registry = ImageFormatRegistry.shared
        #expect(registry.negotiableFormats == [.jxl, .avif, .webp])
        #expect(registry.defaultQualities(differingFrom: 80) == [.webp: 79, .avif: 63, .jxl: 77])
        #expect(Set(registry.qualityFormats) == [.jpeg, .webp, .avif, .heic, .jxl])
        #expect(ImageFormat.gif.canHold(animated: true, alpha: true) && !ImageFormat.png.canHold(animated: true, alpha: true))
        #expect(!ImageFormat.jpeg.canHold(animated: false, alpha: true) && ImageFormat.jxl.canHold(animated: true, alpha: true))
    }

    @Test func aProductRegistersANewFormatOrReplacesOne() {
        let registry = ImageFormatRegistry()
        let tga = ImageFormat(rawValue: "tga")
        registry.register(ImageFormatDescriptor(format: tga, names: ["tga", "targa"], mimeType: "image/x-tga") { $0.first == 0x42 })
        #expect(registry.format(named: "targa") == tga && registry.descriptor(for: tga)?.fileExtension == "tga")
        #expect(registry.format(detecting: Array("BM".utf8) + [UInt8](repeating: 0, count: 20)) == .bmp, "asked after the formats before it")
        #expect(registry.format(detecting: [0x42, 1]) == tga)
        #expect(registry.descriptors.last?.format == .svg, "SVG's loose text test stays last")
        registry.register(ImageFormatDescriptor(format: .jpeg, names: ["jpeg"], mimeType: "image/pjpeg") { _ in false })
        #expect(registry.descriptor(for: .jpeg)?.mimeType == "image/pjpeg" && registry.format(named: "jpg") == nil)
        #expect(ImageFormatRegistry.shared.descriptor(for: .jpeg)?.mimeType == "image/jpeg", "the shared registry is untouched")
    }

    @Test func containerWalkersStopAtDamageInsteadOfReadingPastIt() {
        // A PNG chunk whose length runs past the end: the walk ends there.
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 1, 0x74, 0x45, 0x58, 0x74, 0x41, 0, 0, 0, 0,
                            0x7F, 0xFF, 0xFF, 0xFF, 0x69, 0x43, 0x43, 0x50]
        png.withUnsafeBytes { raw in
            var chunks = PNGChunks(raw)
            let first = chunks.next()
            #expect(first.map { chunks.type(of: $0, is: "tEXt") } == true && first?.body == 16..<17)
            #expect(chunks.next() == nil)
        }
        // ISO boxes: a 64-bit size, then one claiming more than its parent holds.
        let boxes: [UInt8] = [0, 0, 0, 1] + Array("big ".utf8) + [0, 0, 0, 0, 0, 0, 0, 17, 9] + [0, 0, 0, 99] + Array("free".utf8)
        boxes.withUnsafeBytes { raw in
            var walker = ISOBoxes(raw)
            #expect(walker.next()?.body == 16..<17)
            #expect(walker.next() == nil)
            #expect(ISOBoxes.first("big ", in: raw) == 16..<17 && ISOBoxes.first("free", in: raw) == nil)
        }
        // JPEG: segments until the scan; a length past the end ends the walk.
        let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0, 4, 1, 2, 0xFF, 0xFF, 0xE2, 0, 3, 7, 0xFF, 0xDA, 0, 2, 0xFF, 0xE3, 0, 200]
        jpeg.withUnsafeBytes { raw in
            var segments = JPEGSegments(raw)
            #expect(segments.next()?.body == 6..<8 && segments.marker == 0xE1)
            #expect(segments.next()?.body == 13..<14 && segments.marker == 0xE2, "after a fill byte")
            #expect(segments.next() == nil, "the scan ends the header")
        }
    }
}

/// The headers of the formats added with the registry, read without decoding (what `/info` reports).
@Suite struct MoreFormatHeaderTests {
    @Test(arguments: ["TIFF", "BMP", "ICO", "JXL"])
    func theStoredSizeAndOrientationComeFromTheHeaderAlone(_ format: String) throws {
        var checked = 0
        var mismatches: [String] = []
        // Its directory says 16x32 for an entry of 16x16 (the decoder reads the entry; the header, the directory).
        let directoryDisagrees: Set = ["ico/valid/pillow/hopper_unexpected.ico"]
        for entry in Corpus.entries(format: format) where entry.valid && entry.width != nil && !directoryDisagrees.contains(entry.path) {
            let header = ImageHeader(data: try entry.data)
            checked += 1
            let size = header.storedSize.map { "\($0.width)x\($0.height)" } ?? "none"
            if size != "\(entry.width!)x\(entry.height!)" { mismatches.append("\(entry): \(size), expected \(entry.width!)x\(entry.height!)") }
            if let orientation = entry.exifOrientation, header.orientation != ImageOrientation(exifValue: orientation) {
                mismatches.append("\(entry): orientation \(header.orientation), expected \(orientation)")
            }
        }
        #expect(checked >= 10)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }
}
