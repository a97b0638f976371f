import Foundation
import Testing
@testable import WebImage

@Suite struct PNGIncrementalDecoderTests {
    let coder = PNGCoder()

    /// Feeds `data` in `chunkSize` pieces and finishes.
    static func decodeIncrementally(_ data: Data, chunkSize: Int, options: DecodeOptions = DecodeOptions()) throws -> Image {
        let decoder = PNGCoder().makeIncrementalDecoder(options: options)
        var offset = 0
        while offset < data.count {
            let end = min(offset + chunkSize, data.count)
            try decoder.append(data[offset..<end])
            offset = end
        }
        #expect(decoder.receivedByteCount == data.count)
        return try decoder.finish()
    }

    @Test func everyCorpusPNGFedInOneKilobyteChunksEndsLikeAFullDecode() throws {
        var mismatches: [String] = []
        let entries = Corpus.entries(format: "PNG")
        for entry in entries {
            let data = try entry.data
            let full = Result { try coder.decode(data, options: DecodeOptions()) }
            let incremental = Result { try Self.decodeIncrementally(data, chunkSize: 1024) }
            switch (full, incremental) {
            case (.success(let a), .success(let b)):
                if a.pixelFormat != b.pixelFormat || a.size != b.size || a.pixels != b.pixels {
                    mismatches.append("\(entry.path): \(b.size) \(b.pixelFormat) \(b.rgbaSHA256()), decode() gives \(a.size) \(a.pixelFormat) \(a.rgbaSHA256())")
                }
            case (.failure(let a), .failure(let b)):
                if !(a is ImageCodingError) || !(b is ImageCodingError) {
                    mismatches.append("\(entry.path): untyped errors \(a) / \(b)")
                }
            case (.success, .failure(let error)):
                mismatches.append("\(entry.path): incremental threw \(error), decode() succeeded")
            case (.failure(let error), .success):
                mismatches.append("\(entry.path): incremental succeeded, decode() threw \(error)")
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(entries.count):\n\(mismatches.joined(separator: "\n"))")
    }

    @Test func oddChunkSizesAndThumbnailsGiveTheSameImageAsDecode() throws {
        let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 20, height: 20))
        let entries = Corpus.entries(format: "PNG").filter { $0.valid && $0.path.contains("pngsuite") }
        #expect(!entries.isEmpty)
        for entry in entries {
            let data = try entry.data
            let full = try coder.decode(data, options: options)
            for chunkSize in [1, 7, 100_000] {
                let image = try Self.decodeIncrementally(data, chunkSize: chunkSize, options: options)
                #expect(image.size == full.size && image.pixels == full.pixels, "\(entry.path) in \(chunkSize)-byte chunks")
            }
        }
    }

    @Test func partialImageOfAHalfFedPNGHasTheTopRowsAndZeroBelow() throws {
        // Large enough for pooled memory (PixelBufferPool): the full decode below returns its buffer
        // to the pool, where the incremental decoder picks it up again. A partial image that copied
        // rows it has not decoded would show that earlier image's pixels instead of zeros.
        let width = 1100, height = 1000
        let data = try PNGCoderTests.encodedSample(.rgba8, width: width, height: height, seed: 3)
        let expected: [UInt8]
        do {
            let full = try coder.decode(data, options: DecodeOptions())
            expected = Array(full.pixels)
        }
        let rowBytes = width * 4

        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        #expect(decoder.makePartialImage() == nil)
        try decoder.append(data.prefix(data.count / 2))
        let partial = try #require(decoder.makePartialImage())
        #expect(partial.size == PixelSize(width: width, height: height) && partial.pixelFormat == .rgba8)

        var decodedRows = 0
        while decodedRows < height, partial.withUnsafeRow(decodedRows, { row in
            row.elementsEqual(expected[(decodedRows * rowBytes)..<((decodedRows + 1) * rowBytes)])
        }) {
            decodedRows += 1
        }
        #expect(decodedRows > height / 4 && decodedRows < height, "\(decodedRows) rows decoded from half the data")
        let zeroBelow = (decodedRows..<height).allSatisfy { y in
            partial.withUnsafeRow(y) { row in row.allSatisfy { $0 == 0 } }
        }
        #expect(zeroBelow, "rows below the decoded ones must be zero")

        try decoder.append(data.suffix(from: data.count / 2))
        let final = try decoder.finish()
        #expect(Array(final.pixels) == expected)
        #expect(decoder.makePartialImage().map { Array($0.pixels) } == expected)
    }

    @Test func aThumbnailPartialFitsTheDecodedRowsIntoTheThumbnailCanvas() throws {
        // A vertical gradient: a band resampled at the wrong scale or place shows in the values.
        let width = 1100, height = 1000
        let pixels = (0..<height).flatMap { y in [UInt8](repeating: UInt8(y * 255 / (height - 1)), count: width * 3) }
        let data = try coder.encode(try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels), as: .png,
                                    options: EncodeOptions())
        let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 100, height: 100))
        let thumbnail = try coder.decode(data, options: options)
        let decoder = coder.makeIncrementalDecoder(options: options)
        try decoder.append(data.prefix(data.count / 2))
        let partial = try #require(decoder.makePartialImage())
        #expect(partial.size == thumbnail.size && partial.pixelFormat == thumbnail.pixelFormat)

        func rowValues(_ image: Image, _ y: Int) -> [UInt8] { image.withUnsafeRow(y) { Array($0) } }
        let filledRows = (0..<partial.height).prefix { y in rowValues(partial, y).contains { $0 != 0 } || y == 0 }.count
        #expect(filledRows > partial.height / 4 && filledRows < partial.height, "\(filledRows) of \(partial.height) rows")
        for y in 0..<(filledRows - 1) {
            let difference = zip(rowValues(partial, y), rowValues(thumbnail, y)).map { abs(Int($0) - Int($1)) }.max() ?? 0
            #expect(difference <= 2, "row \(y) differs from the full thumbnail by \(difference)")
        }
        #expect((filledRows..<partial.height).allSatisfy { rowValues(partial, $0).allSatisfy { $0 == 0 } })

        try decoder.append(data.suffix(from: data.count / 2))
        #expect(try decoder.finish().pixels == thumbnail.pixels)
    }

    @Test func partialImagesOfAnInterlacedPNGShowEveryPassSoFar() throws {
        let entry = try #require(Corpus.entries.first { $0.path == "png/valid/pillow/pil123rgba.png" })
        let data = try entry.data
        let full = try coder.decode(data, options: DecodeOptions())
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        var partials: [Image] = []
        for offset in stride(from: 0, to: data.count, by: 1024) {
            try decoder.append(data[offset..<min(offset + 1024, data.count)])
            if let partial = decoder.makePartialImage() { partials.append(partial) }
        }
        #expect(partials.count > 10)
        // The first pass arrives first: the last row (odd, so only in the last pass) is still zero.
        let first = try #require(partials.first)
        #expect(first.size == full.size)
        first.withUnsafeRow(full.height - 1) { row in #expect(row.allSatisfy { $0 == 0 }) }
        #expect(try decoder.finish().pixels == full.pixels)
    }

    @Test func truncatedDataThrowsTruncatedDataFromFinish() throws {
        let data = try PNGCoderTests.encodedSample(.rgb8, width: 64, height: 64)
        for length in [0, 5, 20, data.count / 2, data.count - 12] {
            let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
            try decoder.append(data.prefix(length))
            #expect(throws: ImageCodingError.truncatedData(format: .png), "cut at \(length)") { try decoder.finish() }
            // Failures are sticky.
            #expect(throws: ImageCodingError.truncatedData(format: .png)) { try decoder.finish() }
            #expect(throws: ImageCodingError.truncatedData(format: .png)) { try decoder.append(data) }
        }
    }

    /// libpng's progressive verdict on damaged data can depend on how the bytes were split, so a
    /// full decode decides it: the damaged file fails at `finish()` with the full decode's error, and
    /// stays failed.
    @Test func corruptDataFailsAtFinishWithTheFullDecodesErrorAndStaysFailed() throws {
        var data = try PNGCoderTests.encodedSample(.gray8, width: 16, height: 16)
        data[data.count - 20] ^= 0xFF
        var fullError: ImageCodingError?
        do { _ = try coder.decode(data, options: DecodeOptions()) } catch { fullError = error as? ImageCodingError }
        guard case .corruptData(.png, _)? = fullError else {
            Issue.record("the full decode must call it corrupt, got \(String(describing: fullError))")
            return
        }
        for chunking in [data.count, 7, 1] {
            let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
            var offset = 0
            while offset < data.count {
                try decoder.append(data[offset..<min(offset + chunking, data.count)])
                offset += chunking
            }
            #expect(throws: fullError!, "in pieces of \(chunking)") { try decoder.finish() }
            #expect(throws: fullError!) { try decoder.append(Data([0])) }
            #expect(throws: fullError!) { try decoder.finish() }
        }
    }

    @Test func bytesAfterIENDAreIgnored() throws {
        let data = try PNGCoderTests.encodedSample(.grayAlpha8, width: 9, height: 9)
        let decoder = coder.makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data)
        try decoder.append(Data("trailing garbage".utf8))
        #expect(try decoder.finish().pixels == coder.decode(data, options: DecodeOptions()).pixels)
    }

    @Test func largeAncillaryChunkArrivingInSmallPiecesDecodes() throws {
        // A 3 MB private ancillary chunk before the image data.
        let png = try PNGCoderTests.encodedSample(.rgb8, width: 8, height: 8)
        let body = [UInt8](repeating: 0x41, count: 3 << 20)
        let typeAndBody = Array("prVt".utf8) + body
        func bigEndian(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        let chunk = bigEndian(UInt32(body.count)) + typeAndBody + bigEndian(PNGCoderTests.crc32(typeAndBody))
        let afterHeader = 8 + 25  // signature + IHDR
        let data = png.prefix(afterHeader) + Data(chunk) + png.dropFirst(afterHeader)

        let image = try Self.decodeIncrementally(data, chunkSize: 4096)
        #expect(image.pixels == (try coder.decode(png, options: DecodeOptions())).pixels)
    }
}
