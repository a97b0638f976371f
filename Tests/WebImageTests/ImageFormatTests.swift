import Foundation
import Testing
@testable import WebImage

@Suite struct ImageFormatTests {
    @Test func everyCorpusFileIsRecognisedFromItsBytesAlone() throws {
        var mismatches: [String] = []
        var checked = 0
        // A file without its signature (a 16-byte fuzzing input with no ftyp box) cannot be told by its bytes.
        for entry in Corpus.entries where !entry.notes.contains("file signature not recognised") && !entry.notes.contains("no ftyp box") {
            let expected = ImageFormat(rawValue: entry.format.lowercased())
            let sniffed = ImageFormat(sniffing: try entry.data.prefix(64))
            checked += 1
            // The manifest's HEIF is the container family: HEVC-coded files sniff as the more precise HEIC.
            let matches = expected == .heif ? [.heif, .heic].contains(sniffed) : sniffed == expected
            if !matches { mismatches.append("\(entry.path): \(sniffed), expected \(expected)") }
        }
        #expect(checked > 450)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test func corruptSignaturesAreNotMistakenForPNG() throws {
        let broken = Corpus.entries.filter { $0.notes.contains("file signature not recognised") }
        #expect(!broken.isEmpty)
        for entry in broken {
            #expect(ImageFormat(sniffing: try entry.data) != .png, "\(entry.path)")
        }
    }

    @Test func formatsWithoutCorpusFilesAreRecognisedByTheirMagic() {
        func sniff(_ bytes: [UInt8]) -> ImageFormat { ImageFormat(sniffing: bytes) }
        func ftyp(_ brand: String) -> [UInt8] { [0, 0, 0, 24] + Array("ftyp\(brand)".utf8) + [0, 0, 0, 0] }
        #expect(sniff(Array("II".utf8) + [0x2A, 0, 8, 0, 0, 0]) == .tiff)
        #expect(sniff(Array("MM".utf8) + [0, 0x2A, 0, 0, 0, 8]) == .tiff)
        #expect(sniff(ftyp("heic")) == .heic)
        #expect(sniff(ftyp("mif1")) == .heif)
        #expect(sniff(ftyp("avif")) == .avif)
        #expect(sniff(ftyp("isom")) == .unknown)
        // A generic or unknown major brand defers to the first specific compatible brand.
        func ftyp(_ major: String, compatible: [String]) -> [UInt8] {
            [0, 0, 0, UInt8(16 + 4 * compatible.count)] + Array("ftyp\(major)".utf8) + [0, 0, 0, 0] + compatible.flatMap { Array($0.utf8) }
        }
        #expect(sniff(ftyp("mif1", compatible: ["mif1", "miaf", "avif"])) == .avif)
        #expect(sniff(ftyp("mif1", compatible: ["heic", "mif1"])) == .heic)
        #expect(sniff(ftyp("a\u{7f}e!", compatible: ["mif1", "miaf"])) == .heif)
        #expect(sniff(ftyp("isom", compatible: ["mp41"])) == .unknown)
        #expect(sniff(Array("BM".utf8) + [UInt8](repeating: 0, count: 20)) == .bmp)
        #expect(sniff([0, 0, 1, 0, 1, 0, 16, 16]) == .ico)
        #expect(sniff(Array("%PDF-1.7\n".utf8)) == .pdf)
        #expect(sniff(Array("\u{FEFF}  <?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)) == .svg)
        #expect(sniff(Array("<html><body>not an image</body></html>".utf8)) == .unknown)
        #expect(sniff([]) == .unknown)
        #expect(sniff([0xFF, 0xD8]) == .unknown)
        #expect(sniff(Array("GIF89a".utf8)) == .gif)
        #expect(sniff(Array("RIFF\0\0\0\0WEBPVP8 ".utf8)) == .webp)
        #expect(sniff(Array("RIFF\0\0\0\0WAVEfmt ".utf8)) == .unknown)
    }

    @Test func mimeTypesAndExtensionsFollowTheFormat() {
        #expect(ImageFormat.jpeg.mimeType == "image/jpeg")
        #expect(ImageFormat.jpeg.fileExtension == "jpg")
        #expect(ImageFormat.png.fileExtension == "png")
        #expect(ImageFormat.unknown.fileExtension == nil)
        #expect(ImageFormat.unknown.mimeType == "application/octet-stream")
    }
}
