import Foundation
import Testing
@testable import WebImage

@Suite struct JPEGCoderTests {
    let coder = JPEGCoder()
    let stored = DecodeOptions(applyOrientation: false)

    static func entry(_ path: String) throws -> Corpus.Entry {
        try #require(Corpus.entries.first { $0.path == path }, "\(path) is not in the manifest")
    }

    /// The manifest's truncated files: no EOI, or djpeg said the file ends prematurely.
    /// (`truncated_app14.jpg` is whole: only its APP14 segment is short.)
    static func isTruncated(_ entry: Corpus.Entry) -> Bool {
        entry.mode.contains("no-EOI") || entry.notes.contains("Premature end of JPEG file")
    }

    // MARK: - Corpus

    // The corpus tests decode and hash off the cooperative pool (`DecodedForTest`): run on it, they
    // held both of its threads for twenty seconds and starved the suite's network tests.
    @Test func everyValidCorpusJPEGMatchesItsChecksum() async throws {
        var mismatches: [String] = []
        var checked = 0
        for entry in Corpus.entries(format: "JPEG") where entry.valid {
            guard let expected = entry.expectedRGBASHA256 else { continue }
            checked += 1
            do {
                let decoded = try await DecodedForTest.decode(try entry.data, with: coder, options: stored)
                let image = decoded.image
                if image.width != entry.width || image.height != entry.height {
                    mismatches.append("\(entry.path): \(image.size), expected \(entry.width ?? 0)x\(entry.height ?? 0)")
                } else if decoded.checksum != expected {
                    mismatches.append("\(entry.path) (\(entry.mode)): checksum differs")
                }
            } catch {
                mismatches.append("\(entry.path): threw \(error)")
            }
        }
        #expect(checked >= 50)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) files differ:\n\(mismatches.joined(separator: "\n"))")
    }

    @Test func everyEXIFCorpusJPEGMatchesItsOrientedChecksum() async throws {
        var mismatches: [String] = []
        var checked = 0
        for entry in Corpus.entries(format: "JPEG") where entry.valid && entry.exifOrientation != nil {
            guard let expected = entry.orientedRGBASHA256 else { continue }
            checked += 1
            do {
                let decoded = try await DecodedForTest.decode(try entry.data, with: coder)
                let image = decoded.image
                if image.orientation != .up {
                    mismatches.append("\(entry.path): orientation \(image.orientation) left unapplied")
                } else if image.width != entry.orientedWidth || image.height != entry.orientedHeight {
                    mismatches.append("\(entry.path): \(image.size), expected \(entry.orientedWidth ?? 0)x\(entry.orientedHeight ?? 0)")
                } else if decoded.checksum != expected {
                    mismatches.append("\(entry.path): oriented checksum differs")
                }
            } catch {
                mismatches.append("\(entry.path): threw \(error)")
            }
        }
        #expect(checked >= 8)
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test func withoutApplyingOrientationTheStoredPixelsKeepTheDeclaredOrientation() throws {
        let entry = try Self.entry("jpeg/valid/exif-orientation-examples/Landscape_6.jpg")
        let image = try coder.decode(try entry.data, options: stored)
        #expect(image.orientation == .right)
        #expect(image.size == PixelSize(width: 1200, height: 1800))
        let upright = try image.oriented()
        #expect(upright.size == PixelSize(width: 1800, height: 1200))
        #expect(upright.rgbaSHA256() == entry.orientedRGBASHA256)
    }

    @Test func everyInvalidCorpusJPEGThrowsATypedErrorUnlessReferencesOnlyWarn() throws {
        var problems: [String] = []
        let invalid = Corpus.entries(format: "JPEG").filter { !$0.valid }
        #expect(invalid.count >= 4)
        for entry in invalid {
            do {
                _ = try coder.decode(try entry.data, options: stored)
                if !entry.referenceOnlyWarns || Self.isTruncated(entry) {
                    problems.append("\(entry.path): decoded without error")
                }
            } catch let error as ImageCodingError {
                if Self.isTruncated(entry) && error != .truncatedData(format: .jpeg) {
                    problems.append("\(entry.path): \(error), expected truncatedData")
                }
            } catch {
                problems.append("\(entry.path): untyped error \(error)")
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test func extraneousBytesBeforeAMarkerDecodeLikeABrowserShowsThem() throws {
        // djpeg only warns ("Corrupt JPEG data: 4 extraneous bytes before marker 0xdb"); so do we.
        let entry = try Self.entry("jpeg/invalid/pillow/jpeg_ff00_header.jpg")
        let image = try coder.decode(try entry.data, options: stored)
        #expect(image.size == PixelSize(width: 300, height: 225))
    }

    @Test func aCutFileWithAnEndMarkerAppendedIsTruncatedNotHalfGrey() throws {
        let data = try Self.entry("jpeg/valid/exif-orientation-examples/Landscape_6.jpg").data
        let cut = data.prefix(data.count / 2) + Data([0xFF, 0xD9])
        #expect(throws: ImageCodingError.truncatedData(format: .jpeg)) { try coder.decode(cut, options: stored) }
    }

    @Test func twelveBitJPEGThrowsUnsupportedFeature() throws {
        let entry = try Self.entry("jpeg/valid/libjpeg-turbo/monkey12.jpg")
        let error = try #require(throws: ImageCodingError.self) { try coder.decode(try entry.data, options: stored) }
        guard case .unsupportedFeature(.jpeg, let reason) = error else {
            Issue.record("expected unsupportedFeature, got \(error)")
            return
        }
        #expect(reason.contains("precision 12"))
    }

    @Test func truncatingAValidFileAnywhereThrowsTruncatedData() throws {
        for path in ["jpeg/valid/wuffs/peacock.default.jpeg", "jpeg/valid/wuffs/peacock.progressive.jpeg",
                     "jpeg/valid/libjpeg-turbo/testimgari.jpg"] {
            let data = try Self.entry(path).data
            for cut in [0, 1, 2, 3, 20, 200, data.count / 3, data.count / 2, data.count - 2, data.count - 1] {
                #expect(throws: ImageCodingError.truncatedData(format: .jpeg), "\(path) cut at \(cut)") {
                    try coder.decode(data.prefix(cut), options: stored)
                }
            }
        }
    }

    @Test func corruptDataThrowsCorruptDataWithLibjpegsMessage() throws {
        var data = try Self.entry("jpeg/valid/wuffs/peacock.default.jpeg").data
        // Make the scan name a component the frame does not have.
        let sos = try #require(Self.markerOffset(0xDA, in: data))
        data[sos + 5] = 9
        let error = try #require(throws: ImageCodingError.self) { try coder.decode(data, options: stored) }
        guard case .corruptData(.jpeg, let reason) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(reason.contains("component"))
        #expect(throws: ImageCodingError.self) { try coder.decode(Data("not a jpeg at all".utf8), options: stored) }
    }

    @Test func headerDeclaringMorePixelsThanTheLimitThrowsImageTooLarge() throws {
        let huge = Self.header(width: 60000, height: 60000)
        #expect(throws: ImageCodingError.imageTooLarge(width: 60000, height: 60000, limit: DecodeOptions.defaultPixelCountLimit)) {
            try coder.decode(huge, options: DecodeOptions())
        }
        let small = try Self.entry("jpeg/valid/wuffs/peacock.default.jpeg").data
        #expect(throws: ImageCodingError.imageTooLarge(width: 100, height: 75, limit: 7499)) {
            try coder.decode(small, options: DecodeOptions(pixelCountLimit: 7499))
        }
        #expect(try coder.decode(small, options: DecodeOptions(pixelCountLimit: 7500)).size == PixelSize(width: 100, height: 75))
    }

    @Test func fileWithThousandsOfScansIsRefused() throws {
        // Repeat the first scan of a progressive file: libjpeg only warns about the bogus
        // progression, so without a scan limit it would redo the work for every copy.
        let data = try Self.entry("jpeg/valid/wuffs/peacock.progressive.jpeg").data
        let sos = try #require(Self.markerOffset(0xDA, in: data))
        let end = try #require(Self.nextSegmentMarker(in: data, after: sos + 2))
        var hostile = data.prefix(end)
        let scan = data[sos..<end]
        for _ in 0..<1100 { hostile.append(contentsOf: scan) }
        hostile.append(contentsOf: data[end...])
        let error = try #require(throws: ImageCodingError.self) { try coder.decode(hostile, options: stored) }
        guard case .corruptData(.jpeg, let reason) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(reason.contains("scans"))
    }

    @Test func mutatedFilesDecodeOrThrowATypedErrorButNeverCrash() throws {
        var generator = SplitMix(seed: 0xC0FFEE)
        for path in ["jpeg/valid/wuffs/pjw-thumbnail.jpeg", "jpeg/valid/wuffs/peacock.progressive.jpeg",
                     "jpeg/valid/libjpeg-turbo/testimgari.jpg", "jpeg/valid/pillow/pil_sample_cmyk.jpg"] {
            let original = [UInt8](try Self.entry(path).data)
            for round in 0..<120 {
                var bytes = original
                for _ in 0..<Int(generator.next() % 6 + 1) {
                    bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
                if round % 3 == 0 { bytes = Array(bytes.prefix(Int(generator.next() % UInt64(bytes.count)))) }
                let data = Data(bytes)
                do {
                    _ = try coder.decode(data, options: DecodeOptions(thumbnailPixelSize: round % 2 == 0 ? nil : PixelSize(width: 9, height: 9)))
                } catch is ImageCodingError {
                } catch {
                    Issue.record("\(path) round \(round): untyped \(error)")
                }
                let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
                do {
                    for start in stride(from: 0, to: data.count, by: 500) {
                        try decoder.append(data[start..<min(start + 500, data.count)])
                        _ = decoder.makePartialImage()
                    }
                    _ = try decoder.finish()
                } catch is ImageCodingError {
                } catch {
                    Issue.record("\(path) round \(round) incremental: untyped \(error)")
                }
            }
        }
    }

    // MARK: - Pixel formats

    @Test func grayscaleDecodesToGray8AndColourToRGB8() throws {
        let gray = try coder.decode(try Self.entry("jpeg/valid/wuffs/bricks-gray.jpeg").data, options: stored)
        #expect(gray.pixelFormat == .gray8)
        #expect(gray.format == .jpeg)
        let color = try coder.decode(try Self.entry("jpeg/valid/wuffs/bricks-color.jpeg").data, options: stored)
        #expect(color.pixelFormat == .rgb8)
        let cmyk = try coder.decode(try Self.entry("jpeg/valid/pillow/pil_sample_cmyk.jpg").data, options: stored)
        #expect(cmyk.pixelFormat == .rgb8)
    }

    @Test func decodeRecordsTheRequestedScale() throws {
        let image = try coder.decode(try Self.entry("jpeg/valid/wuffs/hat.jpeg").data, options: DecodeOptions(scale: 2))
        #expect(image.scale == 2)
    }

    @Test func sniffsJPEGAndEncodesOnlyJPEG() throws {
        #expect(coder.canDecode(try Self.entry("jpeg/valid/wuffs/hat.jpeg").data))
        #expect(!coder.canDecode(Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])))
        #expect(!coder.canDecode(Data()))
        #expect(coder.canEncode(.jpeg))
        #expect(!coder.canEncode(.png))
    }

    // MARK: - Thumbnails

    @Test func thumbnailHasExactlyTheSizeOutputSizePredicts() throws {
        let data = try Self.entry("jpeg/valid/wuffs/harvesters.jpeg").data // 1165x859
        for box in [PixelSize(width: 400, height: 300), PixelSize(width: 100, height: 100), PixelSize(width: 1, height: 1),
                    PixelSize(width: 1164, height: 859), PixelSize(width: 146, height: 108), PixelSize(width: 5000, height: 5000)] {
            let options = DecodeOptions(thumbnailPixelSize: box, applyOrientation: false)
            let expected = options.outputSize(forSource: PixelSize(width: 1165, height: 859))
            #expect(try coder.decode(data, options: options).size == expected, "box \(box)")
        }
        let exact = DecodeOptions(thumbnailPixelSize: PixelSize(width: 400, height: 300), preservesAspectRatio: false)
        #expect(try coder.decode(data, options: exact).size == PixelSize(width: 400, height: 300))
        #expect(try coder.decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 400, height: 300))).size
            == PixelSize(width: 400, height: 295))
    }

    @Test func maxPixelCountScalesTheDecodeDown() throws {
        let data = try Self.entry("jpeg/valid/wuffs/harvesters.jpeg").data
        let image = try coder.decode(data, options: DecodeOptions(maxPixelCount: 100_000))
        #expect(image.size.pixelCount <= 100_000)
        #expect(image.size == DecodeOptions(maxPixelCount: 100_000).outputSize(forSource: PixelSize(width: 1165, height: 859)))
    }

    @Test func thumbnailSizeIsComputedOnTheDisplayedImage() throws {
        // Stored 1200x1800, displayed 1800x1200 after orientation 6.
        let data = try Self.entry("jpeg/valid/exif-orientation-examples/Landscape_6.jpg").data
        let box = PixelSize(width: 300, height: 300)
        let upright = try coder.decode(data, options: DecodeOptions(thumbnailPixelSize: box))
        #expect(upright.size == PixelSize(width: 300, height: 200))
        #expect(upright.orientation == .up)
        let storedThumbnail = try coder.decode(data, options: DecodeOptions(thumbnailPixelSize: box, applyOrientation: false))
        #expect(storedThumbnail.size == PixelSize(width: 200, height: 300))
        #expect(storedThumbnail.orientation == .right)
        #expect(try storedThumbnail.oriented().rgbaSHA256() == upright.rgbaSHA256())
    }

    @Test func thumbnailIsCloseToTheFullDecodeAreaAveraged() throws {
        // DCT scaling then area averaging is a slightly wider box filter than area-averaging the
        // full decode; on a detailed painting the two stay within 25 dB of each other (no aliasing).
        let data = try Self.entry("jpeg/valid/wuffs/harvesters.jpeg").data
        let full = try coder.decode(data, options: DecodeOptions())
        for side in [60, 140, 300] {
            let thumbnail = try coder.decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: side, height: side)))
            let reference = try Resampler.resample(full, to: thumbnail.size)
            #expect(JPEGTestSupport.psnr(thumbnail, reference) > 25, "box \(side)")
        }
    }

    @Test func dctScaleIsTheSmallestThatStillCoversTheTarget() {
        func denominator(_ w: Int, _ h: Int, _ tw: Int, _ th: Int) -> UInt32 {
            JPEGDecompressor.scaleDenominator(source: PixelSize(width: w, height: h), target: PixelSize(width: tw, height: th))
        }
        #expect(denominator(6028, 3391, 512, 288) == 8)   // 754x424
        #expect(denominator(6028, 3391, 6028, 3391) == 1)
        #expect(denominator(1165, 859, 400, 295) == 2)    // 583x430; 1/4 would be 292 wide
        #expect(denominator(1165, 859, 292, 215) == 4)    // ⌈1165/4⌉ = 292
        #expect(denominator(1165, 859, 293, 215) == 2)
        #expect(denominator(10, 10, 1, 1) == 8)
    }

    // MARK: - Helpers

    /// The offset of the first `FF <marker>` in `data`.
    static func markerOffset(_ marker: UInt8, in data: Data) -> Int? {
        let bytes = [UInt8](data)
        return bytes.indices.dropLast().first { bytes[$0] == 0xFF && bytes[$0 + 1] == marker }
    }

    /// The offset of the next marker after `start` that is not a stuffed byte or RSTn.
    static func nextSegmentMarker(in data: Data, after start: Int) -> Int? {
        let bytes = [UInt8](data)
        var i = start
        while i + 1 < bytes.count {
            if bytes[i] == 0xFF, bytes[i + 1] != 0, bytes[i + 1] != 0xFF, !(0xD0...0xD7).contains(bytes[i + 1]) { return i }
            i += 1
        }
        return nil
    }

    /// A baseline JPEG header (SOI, DQT, SOF0, DHT, SOS) declaring `width` × `height`, with no scan data.
    static func header(width: Int, height: Int) -> Data {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xDB, 0x00, 0x43, 0x00] + [UInt8](repeating: 1, count: 64)
        bytes += [0xFF, 0xC0, 0x00, 0x0B, 0x08, UInt8(height >> 8), UInt8(height & 0xFF),
                  UInt8(width >> 8), UInt8(width & 0xFF), 0x01, 0x01, 0x11, 0x00]
        bytes += [0xFF, 0xC4, 0x00, 0x14, 0x00] + [1] + [UInt8](repeating: 0, count: 15) + [0]
        bytes += [0xFF, 0xC4, 0x00, 0x14, 0x10] + [1] + [UInt8](repeating: 0, count: 15) + [0]
        bytes += [0xFF, 0xDA, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3F, 0x00]
        return Data(bytes)
    }
}

/// Shared by the JPEG test files.
enum JPEGTestSupport {
    /// Peak signal-to-noise ratio between two images of the same size, over RGB, in dB.
    static func psnr(_ a: Image, _ b: Image) -> Double {
        precondition(a.size == b.size)
        let x = Array(((try? a.converted(to: .rgb8)) ?? a).pixels)
        let y = Array(((try? b.converted(to: .rgb8)) ?? b).pixels)
        var squared = 0.0
        for i in x.indices {
            let d = Double(x[i]) - Double(y[i])
            squared += d * d
        }
        let mse = squared / Double(x.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
