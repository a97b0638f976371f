import Foundation
import Testing
@testable import WebImage

@Suite struct JPEGIncrementalDecoderTests {
    let coder = JPEGCoder()

    static func data(_ path: String) throws -> Data {
        try Data(contentsOf: Corpus.root.appendingPathComponent(path))
    }

    /// The outcome of a decode, comparable byte for byte.
    enum Outcome: Equatable, CustomStringConvertible {
        case image(size: PixelSize, format: PixelFormat, orientation: ImageOrientation, pixels: Data)
        case error(ImageCodingError)

        init(_ body: () throws -> Image) {
            do {
                let image = try body()
                self = .image(size: image.size, format: image.pixelFormat, orientation: image.orientation, pixels: image.pixels)
            } catch let error as ImageCodingError {
                self = .error(error)
            } catch {
                self = .error(.invalidImage("untyped error \(error)"))
            }
        }

        var description: String {
            switch self {
            case .image(let size, let format, let orientation, _): "\(size) \(format) \(orientation)"
            case .error(let error): "\(error)"
            }
        }
    }

    /// Feeds `data` in `chunkSize` pieces, then finishes.
    func feed(_ data: Data, chunkSize: Int, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let decoder = coder.makeIncrementalDecoder(options: options)
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            try decoder.append(data.subdata(in: offset..<end))
            offset = end
        }
        return try decoder.finish()
    }

    /// The offsets of every SOS marker in a JPEG file.
    static func scanOffsets(_ data: Data) -> [Int] {
        let bytes = [UInt8](data)
        return bytes.indices.dropLast().filter { bytes[$0] == 0xFF && bytes[$0 + 1] == 0xDA }
    }

    // MARK: - Final image

    @Test func feedingEveryCorpusJPEGIn1KBChunksEndsWithTheFullDecode() throws {
        var mismatches: [String] = []
        let entries = Corpus.entries(format: "JPEG")
        #expect(entries.count > 50)
        for entry in entries {
            let data = try entry.data
            let whole = Outcome { try coder.decode(data, options: DecodeOptions()) }
            let fed = Outcome { try feed(data, chunkSize: 1024) }
            if whole != fed { mismatches.append("\(entry.path): decode \(whole), fed \(fed)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    @Test func fedFinalImageEqualsDecodeWithThumbnailAndOrientationOptions() throws {
        let paths = ["jpeg/valid/wuffs/harvesters.jpeg", "jpeg/valid/wuffs/peacock.progressive.jpeg",
                     "jpeg/valid/pillow/hopper_orientation_6.jpg", "jpeg/valid/pillow/hopper_orientation_5.jpg",
                     "jpeg/valid/pillow/pil_sample_cmyk.jpg", "jpeg/valid/wuffs/bricks-gray.jpeg",
                     "jpeg/valid/libjpeg-turbo/testimgari.jpg", "jpeg/valid/pillow/icc_profile_big.jpg"]
        let optionSets = [DecodeOptions(thumbnailPixelSize: PixelSize(width: 50, height: 40)),
                          DecodeOptions(thumbnailPixelSize: PixelSize(width: 90, height: 90), applyOrientation: false),
                          DecodeOptions(maxPixelCount: 5000, scale: 2)]
        for path in paths {
            let data = try Self.data(path)
            for options in optionSets {
                let whole = Outcome { try coder.decode(data, options: options) }
                let fed = Outcome { try feed(data, chunkSize: 777, options: options) }
                #expect(whole == fed, "\(path) with \(options)")
                if case .error(let error) = whole { Issue.record("\(path) failed: \(error)") }
            }
        }
    }

    @Test func exifOrientationSurvivesChunksThatEndInsideTheEXIFSegment() throws {
        // libjpeg skips APP1 with skip_input_data; when the segment runs past the bytes so far, the
        // rest must still reach the buffer the orientation is read from.
        let entries = Corpus.entries(format: "JPEG").filter { $0.valid && ($0.exifOrientation ?? 1) != 1 }
        #expect(entries.count >= 7)
        for entry in entries {
            let data = try entry.data
            let whole = Outcome { try coder.decode(data, options: DecodeOptions()) }
            let fed = Outcome { try feed(data, chunkSize: 13) }
            #expect(whole == fed, "\(entry.path)")
        }
    }

    @Test func tinyChunksAndHugeSkippedSegmentsStillDecodeExactly() throws {
        // 1-byte chunks exercise every suspension point; icc_profile_big.jpg's ICC segments are
        // skipped by libjpeg across many chunks (skip_input_data past the end of the input).
        for (path, chunk) in [("jpeg/valid/wuffs/peacock.progressive.jpeg", 1), ("jpeg/valid/wuffs/pjw-thumbnail.jpeg", 1),
                              ("jpeg/valid/pillow/icc_profile_big.jpg", 333)] {
            let data = try Self.data(path)
            #expect(Outcome { try feed(data, chunkSize: chunk) } == Outcome { try coder.decode(data, options: DecodeOptions()) }, "\(path)")
        }
    }

    @Test func receivedByteCountCountsEveryAppendedByte() throws {
        let data = try Self.data("jpeg/valid/wuffs/hat.jpeg")
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data.prefix(100))
        try decoder.append(data.dropFirst(100))
        #expect(decoder.receivedByteCount == data.count)
        _ = try decoder.finish()
    }

    // MARK: - Partial images

    @Test func partialOfAHalfFedBaselineFileHasTheDecodedTopRowsAndZeroBottomRows() throws {
        let data = try Self.data("jpeg/valid/wuffs/harvesters.jpeg")
        let full = try coder.decode(data, options: DecodeOptions())
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data.prefix(data.count / 2))
        let partial = try #require(decoder.makePartialImage())
        #expect(partial.size == full.size)
        #expect(partial.pixelFormat == full.pixelFormat)
        let rowBytes = full.width * full.pixelFormat.bytesPerPixel
        let decodedRows = (0..<full.height).prefix { y in
            partial.withUnsafeRow(y) { Array($0) } == full.withUnsafeRow(y) { Array($0) }
        }.count
        #expect(decodedRows > full.height / 4 && decodedRows < full.height, "\(decodedRows) rows decoded")
        for y in decodedRows..<full.height {
            let zero = partial.withUnsafeRow(y) { $0.allSatisfy { $0 == 0 } }
            if !zero {
                Issue.record("row \(y) of \(full.height) is not zero")
                break
            }
        }
        #expect(partial.cost >= rowBytes * full.height)
        // More bytes, more rows; the final image is the full decode.
        try decoder.append(data.dropFirst(data.count / 2))
        #expect(try decoder.finish().pixels == full.pixels)
    }

    @Test func partialNeverShowsAnotherImagesPixels() throws {
        // Leave pooled buffers full of 0xAB, then take a partial of the same size.
        let data = try Self.data("jpeg/valid/wuffs/harvesters.jpeg")   // 1165x859 baseline, no orientation
        let junk = [UInt8](repeating: 0xAB, count: 1165 * 859 * 3)
        for _ in 0..<2 {
            let image = try Image(width: 1165, height: 859, pixelFormat: .rgb8, pixels: junk)
            #expect(image.cost >= junk.count)   // more when the pool hands out a larger idle buffer
        }
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data.prefix(40_000))
        let partial = try #require(decoder.makePartialImage())
        let last = partial.withUnsafeRow(partial.height - 1) { Array($0) }
        #expect(last.allSatisfy { $0 == 0 })
    }

    @Test func partialOfAProgressiveFileAfterItsFirstScansIsFullSizeAndDiffersFromTheFinal() throws {
        let data = try Self.data("jpeg/valid/wuffs/peacock.progressive.jpeg")
        let scans = Self.scanOffsets(data)
        #expect(scans.count == 10)
        let full = try coder.decode(data, options: DecodeOptions())
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        // Everything up to (and a little past) the 4th SOS: scans 1-3 are complete.
        try decoder.append(data.prefix(scans[3] + 20))
        let partial = try #require(decoder.makePartialImage())
        #expect(partial.size == full.size)
        #expect(partial.pixels != full.pixels)
        let psnr = JPEGTestSupport.psnr(partial, full)
        #expect(psnr > 15 && psnr < 60, "PSNR \(psnr)")
        // Later scans get closer to the final image.
        try decoder.append(data[(scans[3] + 20)..<scans[8]])
        let later = try #require(decoder.makePartialImage())
        #expect(JPEGTestSupport.psnr(later, full) > psnr)
        try decoder.append(data[scans[8]...])
        #expect(try decoder.finish().pixels == full.pixels)
    }

    @Test func progressivePartialHonoursThumbnailAndOrientation() throws {
        let data = try Self.data("jpeg/valid/wuffs/peacock.progressive.jpeg")
        let scans = Self.scanOffsets(data)
        let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 40, height: 40))
        let decoder = coder.makeIncrementalDecoder(options: options)
        try decoder.append(data.prefix(scans[2] + 1))
        let partial = try #require(decoder.makePartialImage())
        #expect(partial.size == PixelSize(width: 40, height: 30))
    }

    @Test func partialIsNilUntilAPixelExists() throws {
        let data = try Self.data("jpeg/valid/wuffs/peacock.progressive.jpeg")
        let scans = Self.scanOffsets(data)
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(data.prefix(100))
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(data[100..<(scans[1] - 10)]) // inside the first scan: none complete yet
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(data[(scans[1] - 10)..<(scans[1] + 2)]) // half an SOS marker: not yet
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(data[(scans[1] + 2)..<(scans[1] + 20)]) // the second scan has begun
        #expect(decoder.makePartialImage() != nil)
    }

    @Test func arithmeticCodedFilesDecodeOnceAllBytesAreIn() throws {
        // libjpeg's arithmetic decoder cannot suspend: no partial images, same final image.
        let data = try Self.data("jpeg/valid/libjpeg-turbo/testimgari.jpg")
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data.prefix(data.count - 10))
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(data.suffix(10))
        #expect(try decoder.finish().pixels == coder.decode(data, options: DecodeOptions()).pixels)
    }

    @Test func finalImageIsAlsoThePartialOnceDone() throws {
        let data = try Self.data("jpeg/valid/wuffs/hat.jpeg")
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data)
        let partial = try #require(decoder.makePartialImage())
        #expect(partial.pixels == (try decoder.finish()).pixels)
    }

    // MARK: - Errors

    @Test func finishingATruncatedFileThrowsTruncatedDataEveryTime() throws {
        for path in ["jpeg/valid/wuffs/harvesters.jpeg", "jpeg/valid/wuffs/peacock.progressive.jpeg",
                     "jpeg/valid/libjpeg-turbo/testimgari.jpg"] {
            let data = try Self.data(path)
            let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
            try decoder.append(data.prefix(data.count * 2 / 3))
            #expect(throws: ImageCodingError.truncatedData(format: .jpeg), "\(path)") { try decoder.finish() }
            #expect(throws: ImageCodingError.truncatedData(format: .jpeg), "\(path)") { try decoder.finish() }
            #expect(throws: ImageCodingError.truncatedData(format: .jpeg), "\(path)") { try decoder.append(Data([0xFF, 0xD9])) }
        }
    }

    @Test func corruptBytesThrowOnAppendAndEveryLaterCallThrowsTheSameError() throws {
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        let error = try #require(throws: ImageCodingError.self) {
            // An SOF0 declaring zero components.
            try decoder.append(Data([0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x08, 0x08, 0x00, 0x10, 0x00, 0x10, 0x00]))
        }
        guard case .corruptData(.jpeg, _) = error else {
            Issue.record("expected corruptData, got \(error)")
            return
        }
        #expect(throws: error) { try decoder.append(Data([0x00])) }
        #expect(throws: error) { try decoder.finish() }
        #expect(decoder.makePartialImage() == nil)
    }

    @Test func tooLargeHeaderThrowsOnAppend() throws {
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions(pixelCountLimit: 1000))
        let data = try Self.data("jpeg/valid/wuffs/hat.jpeg")
        #expect(throws: ImageCodingError.imageTooLarge(width: 90, height: 112, limit: 1000)) {
            try decoder.append(data.prefix(2000))
        }
        #expect(throws: ImageCodingError.imageTooLarge(width: 90, height: 112, limit: 1000)) { try decoder.finish() }
    }
}
