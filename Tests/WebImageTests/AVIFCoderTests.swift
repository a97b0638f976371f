import Foundation
import Testing
@testable import WebImage
@testable import WebImageAVIF

@Suite struct AVIFCoderTests {
    @Test func everyValidCorpusAVIFMatchesItsReferenceStoredAndOriented() async throws {
        // The two 8.3 MP files take most of a debug run: scripts/corpus-check.py checks them in release.
        let entries = Corpus.entries(format: "AVIF").filter { $0.valid && ($0.width ?? 0) * ($0.height ?? 0) < 4_000_000 }
        #expect(entries.count >= 12)
        for entry in entries {
            let data = try entry.data
            let decoded = try await DecodedForTest.decode(data, with: AVIFCoder(),
                                                          options: DecodeOptions(applyOrientation: false, firstFrameOnly: true))
            let stored = decoded.image
            #expect(stored.format == .avif, "\(entry)")
            #expect(stored.width == entry.width && stored.height == entry.height, "\(entry)")
            #expect(decoded.checksum == entry.expectedRGBASHA256, "\(entry)")
            if let oriented = entry.orientedRGBASHA256 {
                let decodedUpright = try await DecodedForTest.decode(data, with: AVIFCoder(), options: DecodeOptions(firstFrameOnly: true))
                let upright = decodedUpright.image
                #expect(upright.orientation == .up, "\(entry)")
                #expect(upright.width == entry.orientedWidth && upright.height == entry.orientedHeight, "\(entry)")
                #expect(decodedUpright.checksum == oriented, "\(entry)")
                #expect(stored.orientation == ImageOrientation(exifValue: entry.exifOrientation ?? 1), "\(entry)")
            }
        }
    }

    @Test func everyBindingFrameOfTheCorpusSequencesMatches() async throws {
        let rows = Corpus.frames.filter { $0.path.hasPrefix("avif/") && $0.binding }
        #expect(!rows.isEmpty)
        for (path, frames) in Dictionary(grouping: rows, by: \.path) {
            let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
            let (loopCount, checksums) = try await offThePool {
                let image = try AVIFCoder().decode(data)
                return (image.loopCount, image.frames.map { $0.image.rgbaSHA256() })
            }
            #expect(checksums.count == frames[0].frameCount, "\(path)")
            #expect(loopCount == 0, "AVIF has no loop count: \(path)")
            for row in frames where row.index < checksums.count {
                #expect(checksums[row.index] == row.rgbaSHA256, "\(path) frame \(row.index)")
            }
        }
    }

    @Test func badInputIsATypedErrorAndLimitsHoldBeforeDecoding() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("avif/valid/av1-avif/Link-U/kimono.avif"))
        for cut in [16, 200, data.count / 2, data.count - 10] {
            #expect(throws: ImageCodingError.self) { try AVIFCoder().decode(data.prefix(cut)) }
        }
        #expect(throws: ImageCodingError.imageTooLarge(width: 722, height: 1024, limit: 1000)) {
            try AVIFCoder().decode(data, options: DecodeOptions(pixelCountLimit: 1000))
        }
        #expect(throws: ImageCodingError.unsupportedFormat(.png)) { try AVIFCoder().decode(try encodedPicture()) }
    }

    @Test func aSequenceIsBoundedAndCanBeReadAsItsFirstFrame() throws {
        let path = try #require(Corpus.frames.first { $0.path.hasPrefix("avif/") && $0.binding }?.path)
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
        let count = try AVIFCoder().decode(data).frames.count
        #expect(count > 1)
        #expect(throws: ImageCodingError.self) { try AVIFCoder().decode(data, options: DecodeOptions(maxFrameCount: count - 1)) }
        #expect(!(try AVIFCoder().decode(data, options: DecodeOptions(firstFrameOnly: true, maxFrameCount: 1)).isAnimated))
    }
}

extension AVIFCoderTests {
    @Test func lossyEncodeStaysCloseAndLosslessIsExactWithAlpha() async throws {
        let photo = try EncodeOptionsTests.photo()
        let lossy = try await offThePool { try AVIFCoder().decode(try AVIFCoder().encode(photo, as: .avif, options: EncodeOptions(compressionQuality: 0.9))) }
        #expect(lossy.size == photo.size && lossy.format == .avif)
        #expect(try psnr(photo, lossy) >= 35)
        let small = try APNGTests.animation(frames: 1, width: 24, height: 16)
        let exact = try AVIFCoder().decode(try AVIFCoder().encode(small, as: .avif, options: EncodeOptions(isLossless: true)))
        #expect(exact.pixelFormat == .rgba8 && exact.rgbaSHA256() == small.rgbaSHA256())
        #expect(throws: ImageCodingError.unsupportedEncoding(format: .webp, pixelFormat: .rgba8)) {
            try AVIFCoder().encode(small, as: .webp)
        }
    }

    @Test func anAnimationIsWrittenAsASequenceWithItsDurations() throws {
        let animation = try APNGTests.animation(frames: 3, width: 24, height: 16)
        let decoded = try AVIFCoder().decode(try AVIFCoder().encode(animation, as: .avif, options: EncodeOptions(isLossless: true, compressionEffort: 0.2)))
        #expect(decoded.frames.count == 3)
        #expect(decoded.frames.map(\.storedDuration) == animation.frames.map(\.storedDuration))
        #expect(decoded.frames.map { $0.image.rgbaSHA256() } == animation.frames.map { $0.image.rgbaSHA256() })
        let first = try AVIFCoder().decode(try AVIFCoder().encode(animation, as: .avif, options: EncodeOptions(firstFrameOnly: true)))
        #expect(!first.isAnimated)
    }

    @Test func maxFileSizeAndEffortShapeTheFile() async throws {
        let photo = try EncodeOptionsTests.photo()
        let (best, worst, fitted) = try await offThePool {
            let best = try AVIFCoder().encode(photo, as: .avif, options: EncodeOptions(compressionEffort: 0))
            let worst = try AVIFCoder().encode(photo, as: .avif, options: EncodeOptions(compressionQuality: 0, compressionEffort: 0))
            let fitted = try AVIFCoder().encode(photo, as: .avif, options: EncodeOptions(compressionEffort: 0, maxFileSize: (best.count + worst.count) / 2))
            return (best, worst, fitted)
        }
        #expect(fitted.count <= (best.count + worst.count) / 2 && fitted.count > worst.count)
        #expect(AVIFEncoding.quantizer(forQuality: 0.9) == 6 && AVIFEncoding.quantizer(forQuality: 0) == 63
                && AVIFEncoding.quantizer(forQuality: 1) == 0)
        #expect(AVIFEncoding.speed(forEffort: nil) == 6 && AVIFEncoding.speed(forEffort: 0) == 10 && AVIFEncoding.speed(forEffort: 1) == 0)
    }
}
