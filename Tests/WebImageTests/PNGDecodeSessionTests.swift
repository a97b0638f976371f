import Foundation
import Testing
@testable import WebImage

@Suite struct PNGDecodeSessionTests {
    @Test func decodesStraightIntoItsImageWhenFedEverything() throws {
        let data = try PNGCoderTests.encodedSample(.grayAlpha8, width: 7, height: 5)
        let session = try PNGDecodeSession(pixelCountLimit: 35, zeroFillsOutput: false)
        #expect(session.makeImage(scale: 1) == nil)
        let complete = try data.withUnsafeBytes { try session.feed($0) }
        #expect(complete && session.isComplete)
        let image = try #require(session.makeImage(scale: 3))
        #expect(image.size == PixelSize(width: 7, height: 5) && image.pixelFormat == .grayAlpha8 && image.scale == 3)
        #expect(image.pixels == (try PNGCoderTests.sampleImage(.grayAlpha8, width: 7, height: 5)).pixels)
    }

    @Test func headerAloneGivesNoPartialImage() throws {
        let data = try PNGCoderTests.encodedSample(.rgb8, width: 30, height: 30)
        let session = try PNGDecodeSession(pixelCountLimit: 900, zeroFillsOutput: true)
        // Signature, IHDR and the first IDAT header: the session allocates but no row is decoded yet.
        let complete = try data.prefix(8 + 25 + 8).withUnsafeBytes { try session.feed($0) }
        #expect(!complete)
        #expect(session.makePartialImage(scale: 1) == nil)
        #expect(session.makeImage(scale: 1) == nil)
    }

    @Test func failuresAreSticky() throws {
        let data = PNGCoderTests.craftedPNG(width: 50, height: 50)
        let session = try PNGDecodeSession(pixelCountLimit: 2499, zeroFillsOutput: false)
        let tooLarge = ImageCodingError.imageTooLarge(width: 50, height: 50, limit: 2499)
        #expect(throws: tooLarge) { try data.withUnsafeBytes { try session.feed($0) } }
        #expect(throws: tooLarge) { try data.withUnsafeBytes { try session.feed($0) } }
        #expect(session.makePartialImage(scale: 1) == nil)
    }

    @Test func aZlibStreamThatEndsBeforeTheLastRowIsCorrupt() throws {
        // The crafted PNG's IDAT holds an empty zlib stream: IEND arrives with no rows decoded.
        let data = PNGCoderTests.craftedPNG(width: 3, height: 3)
        let session = try PNGDecodeSession(pixelCountLimit: 100, zeroFillsOutput: false)
        #expect(throws: ImageCodingError.corruptData(format: .png, reason: "Not enough image data")) {
            try data.withUnsafeBytes { try session.feed($0) }
        }
    }
}
