import Foundation
import Testing
@testable import WebImage
import WebImageHEIF

@Suite struct HEIFCoderTests {
    @Test func everyValidCorpusHEIFMatchesItsReferenceStoredAndOriented() async throws {
        let entries = Corpus.entries(format: "HEIF").filter(\.valid)
        #expect(entries.count >= 6)
        for entry in entries {
            let data = try entry.data
            #expect(HEIFCoder().canDecode(data), "\(entry)")
            let stored = try await DecodedForTest.decode(data, with: HEIFCoder(), options: DecodeOptions(applyOrientation: false))
            #expect(stored.image.width == entry.width && stored.image.height == entry.height, "\(entry)")
            #expect(stored.checksum == entry.expectedRGBASHA256, "\(entry)")
            if let oriented = entry.orientedRGBASHA256 {
                let upright = try await DecodedForTest.decode(data, with: HEIFCoder())
                #expect(upright.image.width == entry.orientedWidth && upright.image.height == entry.orientedHeight, "\(entry)")
                #expect(upright.checksum == oriented, "\(entry)")
            }
        }
    }

    @Test func everyInvalidCorpusHEIFIsATypedError() async throws {
        let invalid = Corpus.entries(format: "HEIF").filter { !$0.valid }
        #expect(invalid.count >= 3)
        for entry in invalid {
            let data = try entry.data
            let error = try await offThePool { () -> String? in
                do { _ = try HEIFCoder().decode(data); return nil } catch { return error is ImageCodingError ? "typed" : "\(error)" }
            }
            #expect(error == "typed", "\(entry)")
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

extension HEIFCoderTests {
    /// Debian's libheif carries the x265 plugin: HEIC is written, lossy near the source and sized by quality.
    @Test func heicIsWrittenAndReadBack() async throws {
        #expect(HEIFCoder().canEncode(.heic) && !HEIFCoder().canEncode(.heif) && !HEIFCoder().canEncode(.avif))
        // x265 encodes on threads of its own; the calls are kept off the cooperative pool.
        let (photo, small, large, back) = try await offThePool {
            let photo = try EncodeOptionsTests.photo()
            let small = try HEIFCoder().encode(photo, as: .heic, options: EncodeOptions(compressionQuality: 0.3))
            let large = try HEIFCoder().encode(photo, as: .heic, options: EncodeOptions(compressionQuality: 0.9))
            return (photo, small, large, try HEIFCoder().decode(large))
        }
        #expect(ImageFormat(sniffing: large) == .heic && small.count < large.count, "\(small.count) < \(large.count)")
        #expect(back.size == photo.size && back.format == .heic)
        var levels = [UInt8](repeating: 128, count: 512)
        for index in stride(from: 1, to: 512, by: 2) { levels[index] = UInt8(index / 32 * 16) }
        let clear = try Image(width: 16, height: 16, pixelFormat: .grayAlpha8, pixels: levels)
        let withAlpha = try HEIFCoder().decode(try HEIFCoder().encode(clear, as: .heic))
        #expect(withAlpha.pixelFormat.hasAlpha && withAlpha.size == clear.size)
        #expect(throws: ImageCodingError.self) { try HEIFCoder().encode(photo, as: .heif) }
    }
}
