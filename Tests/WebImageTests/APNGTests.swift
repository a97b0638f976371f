import Foundation
import Testing
@testable import WebImage

@Suite struct APNGTests {
    static func corpusFile(_ path: String) throws -> Data {
        try Data(contentsOf: Corpus.root.appendingPathComponent(path))
    }

    /// An animated RGBA image of `count` frames whose pixels differ per frame, with alpha 0, 128 and 255.
    static func animation(frames count: Int, width: Int = 20, height: Int = 12, loopCount: Int = 3) throws -> Image {
        let frames = try (0..<count).map { index in
            var pixels: [UInt8] = []
            for y in 0..<height {
                for x in 0..<width {
                    let alpha: UInt8 = (x + y + index) % 3 == 0 ? 0 : ((x + index) % 2 == 0 ? 255 : 128)
                    pixels += alpha == 0 ? [0, 0, 0, 0] : [UInt8(truncatingIfNeeded: x * 12), UInt8(truncatingIfNeeded: y * 20), UInt8(truncatingIfNeeded: index * 60), alpha]
                }
            }
            let image = try Image(width: width, height: height, pixelFormat: .rgba8, pixels: pixels)
            return ImageFrame(image: image, duration: .milliseconds(40 * (index + 1)))
        }
        return try Image(frames: frames, loopCount: loopCount)
    }

    @Test func everyBindingFrameOfTheCorpusMatches() async throws {
        let rows = Corpus.frames.filter { $0.path.hasPrefix("png/") && $0.binding }
        #expect(rows.count > 40)
        for (path, frames) in Dictionary(grouping: rows, by: \.path) {
            let data = try Self.corpusFile(path)
            let image = try await offThePool { try PNGCoder().decode(data, options: DecodeOptions(applyOrientation: false)) }
            let all = image.frames
            #expect(all.count == frames[0].frameCount, "\(path)")
            for row in frames where row.index < all.count {
                #expect(all[row.index].image.rgbaSHA256() == row.rgbaSHA256, "\(path) frame \(row.index)")
                if let milliseconds = row.durationMilliseconds {
                    #expect(all[row.index].storedDuration == .milliseconds(milliseconds), "\(path) frame \(row.index)")
                }
            }
            if let loop = frames[0].loop { #expect(image.loopCount == loop, "\(path)") }
        }
    }

    @Test func aHiddenDefaultImageComesFirstWithNoDuration() throws {
        // single_frame_default.png: IDAT is not part of the one-frame animation.
        let image = try PNGCoder().decode(try Self.corpusFile("png/valid/pillow/apng/single_frame_default.png"))
        #expect(image.frames.count == 2)
        #expect(image.frames[0].duration == .zero)
        #expect(image.frames[1].storedDuration == .seconds(1))
    }

    @Test func delaysFollowTheFractionAndShortOnesPlayAsBrowsersPlayThem() throws {
        let image = try PNGCoder().decode(try Self.corpusFile("png/valid/pillow/apng/delay_zero_denom.png"))
        #expect(image.frames.dropFirst().map(\.storedDuration) == [.milliseconds(500), .milliseconds(1000)])
        let zero = try PNGCoder().decode(try Self.corpusFile("png/valid/pillow/apng/dispose_op_previous_frame.png"))
        #expect(zero.frames.map(\.storedDuration) == [.zero, .zero, .zero])
        #expect(zero.frames.map(\.duration) == [.milliseconds(100), .milliseconds(100), .milliseconds(100)])
    }

    @Test func brokenAnimationsDecodeAsTheStillImage() throws {
        let still = "b74d4937e01ab329a13243a208684ecbee31249b8508871d01aeef8604c9e5eb"
        for path in ["png/valid/pillow/apng/chunk_no_fdat.png", "png/valid/pillow/apng/chunk_multi_actl.png",
                     "png/valid/pillow/apng/chunk_actl_after_idat.png", "png/valid/pillow/apng/syntax_num_frames_zero_default.png",
                     "png/invalid/pillow/apng/chunk_repeat_fctl.png"] {
            let image = try PNGCoder().decode(try Self.corpusFile(path))
            #expect(!image.isAnimated, "\(path)")
            #expect(image.rgbaSHA256() == still, "\(path)")
        }
    }

    @Test func aFrameWithCorruptDataMakesTheFileDecodeAsItsStillImage() throws {
        var bytes = [UInt8](try PNGCoder().encode(try Self.animation(frames: 3), as: .png))
        // Overwrite the start of the last fdAT's zlib data (its CRC is not what libpng checks: the
        // frame is re-wrapped as IDAT).
        let fdAT = try #require(bytes.indices.last { bytes[$0..<min($0 + 4, bytes.count)].elementsEqual("fdAT".utf8) })
        for offset in (fdAT + 8)..<(fdAT + 14) { bytes[offset] = 0xFF }
        let image = try PNGCoder().decode(Data(bytes))
        #expect(!image.isAnimated)
        #expect(image.rgbaSHA256() == (try Self.animation(frames: 3)).rgbaSHA256())
    }

    @Test func aTruncatedAnimationIsATypedError() throws {
        let data = try PNGCoder().encode(try Self.animation(frames: 3), as: .png)
        for length in [data.count / 2, data.count - 13, data.count - 1] {
            #expect(throws: ImageCodingError.truncatedData(format: .png)) { try PNGCoder().decode(data.prefix(length)) }
        }
    }

    @Test func theBudgetAndFirstFrameOnlyHoldBeforeAnyFrameIsDecoded() throws {
        let data = try Self.corpusFile("png/valid/wuffs/muybridge.apng")   // 15 frames of 30x20
        #expect(throws: ImageCodingError.animationTooLarge(frameCount: 15, byteCount: 15 * 30 * 20 * 4, frameLimit: 14,
                                                           byteLimit: DecodeOptions.defaultMaxAnimationByteCount)) {
            try PNGCoder().decode(data, options: DecodeOptions(maxFrameCount: 14))
        }
        let first = try PNGCoder().decode(data, options: DecodeOptions(firstFrameOnly: true, maxFrameCount: 1))
        #expect(!first.isAnimated && first.size == PixelSize(width: 30, height: 20))
        #expect(throws: ImageCodingError.imageTooLarge(width: 30, height: 20, limit: 500)) {
            try PNGCoder().decode(data, options: DecodeOptions(pixelCountLimit: 500))
        }
    }

    @Test func thumbnailsResampleEveryFrame() throws {
        let data = try Self.corpusFile("png/valid/wuffs/animated-red-blue.apng")   // 64x48, 4 frames
        let image = try PNGCoder().decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 32, height: 32)))
        #expect(image.frames.count == 4)
        #expect(image.frames.allSatisfy { $0.image.size == PixelSize(width: 32, height: 24) })
    }

    @Test func anAnimationRoundTripsExactlyWithDurationsAndLoopCount() throws {
        let animation = try Self.animation(frames: 4, loopCount: 7)
        let data = try PNGCoder().encode(animation, as: .png)
        let decoded = try PNGCoder().decode(data)
        #expect(decoded.frames.count == 4)
        #expect(decoded.loopCount == 7)
        #expect(decoded.frames.map(\.storedDuration) == animation.frames.map(\.storedDuration))
        #expect(decoded.frames.map { $0.image.rgbaSHA256() } == animation.frames.map { $0.image.rgbaSHA256() })
        // A corpus animation survives a decode–encode–decode too.
        let corpus = try PNGCoder().decode(try Self.corpusFile("png/valid/wuffs/animated-red-blue.apng"))
        let again = try PNGCoder().decode(try PNGCoder().encode(corpus, as: .png))
        #expect(again.frames.map { $0.image.rgbaSHA256() } == corpus.frames.map { $0.image.rgbaSHA256() })
        #expect(again.loopCount == 3)
    }

    @Test func encodeOptionsCanWriteTheFirstFrameOrScaleEveryFrame() throws {
        let animation = try Self.animation(frames: 3)
        let first = try PNGCoder().decode(try PNGCoder().encode(animation, as: .png, options: EncodeOptions(firstFrameOnly: true)))
        #expect(!first.isAnimated && first.rgbaSHA256() == animation.rgbaSHA256())
        let small = try PNGCoder().decode(try PNGCoder().encode(animation, as: .png, options: EncodeOptions(maxPixelSize: 10)))
        #expect(small.frames.count == 3 && small.frames.allSatisfy { $0.image.size == PixelSize(width: 10, height: 6) })
    }

    @Test func anOrientedAnimationTurnsEveryFrame() throws {
        let animation = try Self.animation(frames: 2).withOrientation(.right)
        let upright = try animation.oriented()
        #expect(upright.frames.count == 2)
        #expect(upright.frames.allSatisfy { $0.image.size == PixelSize(width: 12, height: 20) })
        #expect(upright.frames[1].image.rgbaSHA256() == (try animation.frames[1].image.withOrientation(.right).oriented()).rgbaSHA256())
        #expect(upright.frames.map(\.storedDuration) == animation.frames.map(\.storedDuration))
    }

    @Test func theManagerLoadsAnAPNGAndServesItAgainFromDisk() async throws {
        let server = try TestHTTPServer()
        let data = try Self.corpusFile("png/valid/wuffs/animated-red-blue.apng")
        server.route("/anim.png", TestResponse(headers: [("Content-Type", "image/apng")], body: data))
        let fixture = ManagerFixture()
        defer { fixture.directory.remove() }
        let url = server.url("/anim.png")
        let first = try await fixture.manager.loadImage(url: url, options: .waitStoreCache)
        #expect(first.image.frames.count == 4 && first.image.loopCount == 3)
        #expect(try await fixture.cache.diskCache?.data(forKey: url.absoluteString) == data)
        await fixture.cache.clear(.memory)
        let second = try await fixture.manager.loadImage(url: url)
        #expect(second.cacheType == .disk)
        #expect(second.image.frames.map { $0.image.rgbaSHA256() } == first.image.frames.map { $0.image.rgbaSHA256() })
        #expect(server.requestCount(for: "/anim.png") == 1)
    }
}

extension APNGTests {
    @Test func anIncrementalDecodeFedInOneKilobyteChunksEndsEqualToTheFullDecode() throws {
        let encoded = try PNGCoder().encode(try Self.animation(frames: 5, width: 60, height: 40), as: .png, options: EncodeOptions(pngCompressionLevel: 0))
        for data in [encoded, try Self.corpusFile("png/valid/wuffs/muybridge.apng"), try Self.corpusFile("png/valid/pillow/apng/dispose_op_previous.png")] {
            let full = try PNGCoder().decode(data)
            let decoder = PNGCoder().makeIncrementalDecoder(options: DecodeOptions())
            var partials = 0
            for start in stride(from: 0, to: data.count, by: 1024) {
                try decoder.append(data[start..<min(start + 1024, data.count)])
                if decoder.makePartialImage() != nil { partials += 1 }
            }
            let final = try decoder.finish()
            #expect(final.frames.count == full.frames.count && final.loopCount == full.loopCount)
            #expect(final.frames.map { $0.image.rgbaSHA256() } == full.frames.map { $0.image.rgbaSHA256() })
            #expect(final.frames.map(\.storedDuration) == full.frames.map(\.storedDuration))
            #expect(data.count < 2048 || partials > 0, "the default image shows while the file arrives")
        }
    }
}
