import Foundation
import Testing
@testable import WebImage
import WebImageHEIF

@Suite struct HEIFCoderTests {
    @Test func everyValidCorpusHEIFMatchesItsReferenceStoredAndOriented() async throws {
        let entries = Corpus.entries(format: "HEIF").filter(\.valid)
        #expect(entries.count >= 11)
        for entry in entries {
            await Task.yield()   // a corpus decode is long, synchronous work: let the pool's other tasks run
            let data = try entry.data
            #expect(HEIFCoder().canDecode(data), "\(entry)")
            let stored = try HEIFCoder().decode(data, options: DecodeOptions(applyOrientation: false))
            #expect(stored.width == entry.width && stored.height == entry.height, "\(entry)")
            #expect(stored.rgbaSHA256() == entry.expectedRGBASHA256, "\(entry)")
            if let oriented = entry.orientedRGBASHA256 {
                let upright = try HEIFCoder().decode(data)
                #expect(upright.width == entry.orientedWidth && upright.height == entry.orientedHeight, "\(entry)")
                #expect(upright.rgbaSHA256() == oriented, "\(entry)")
            }
        }
    }

    @Test func everyInvalidCorpusHEIFIsATypedError() async throws {
        let invalid = Corpus.entries(format: "HEIF").filter { !$0.valid }
        #expect(invalid.count >= 3)
        for entry in invalid {
            await Task.yield()   // a corpus decode is long, synchronous work: let the pool's other tasks run
            #expect(throws: ImageCodingError.self, "\(entry)") { try HEIFCoder().decode(try entry.data) }
        }
    }

    @Test func limitsHoldBeforeDecodingAndTruncationIsAnError() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("heif/valid/pillow/avif/hopper.heif"))
        #expect(throws: ImageCodingError.self) { try HEIFCoder().decode(data, options: DecodeOptions(pixelCountLimit: 100)) }
        for cut in [16, data.count / 2] {
            #expect(throws: ImageCodingError.self) { try HEIFCoder().decode(data.prefix(cut)) }
        }
        let thumbnail = try HEIFCoder().decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 32, height: 32)))
        #expect(max(thumbnail.width, thumbnail.height) == 32)
    }
}
