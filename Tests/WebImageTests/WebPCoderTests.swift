import Foundation
import Testing
@testable import WebImage
import WebImageWebP

/// The peak signal-to-noise ratio of `b` against `a` over their RGB(A) channels, in dB.
func psnr(_ a: Image, _ b: Image) throws -> Double {
    let left = try a.converted(to: .rgba8), right = try b.converted(to: .rgba8)
    precondition(left.size == right.size)
    var squared = 0.0
    left.withUnsafePixels { l in
        right.withUnsafePixels { r in
            for index in 0..<(left.width * left.height * 4) {
                let difference = Double(l[index]) - Double(r[index])
                squared += difference * difference
            }
        }
    }
    let mean = squared / Double(left.width * left.height * 4)
    return mean == 0 ? .infinity : 10 * log10(255 * 255 / mean)
}

@Suite struct WebPCoderTests {
    @Test func everyValidCorpusWebPMatchesItsReference() async throws {
        let entries = Corpus.entries(format: "WEBP").filter(\.valid)
        #expect(entries.count > 30)
        for entry in entries {
            let data = try entry.data
            let decoded = try await DecodedForTest.decode(data, with: WebPCoder(), options: DecodeOptions(applyOrientation: false, firstFrameOnly: true))
            let image = decoded.image
            #expect(image.format == .webp, "\(entry)")
            #expect(image.width == entry.width && image.height == entry.height, "\(entry)")
            #expect(decoded.checksum == entry.expectedRGBASHA256, "\(entry)")
            if let oriented = entry.orientedRGBASHA256 {
                #expect(image.orientation == ImageOrientation(exifValue: entry.exifOrientation ?? 1), "\(entry)")
                #expect(try await DecodedForTest.decode(data, with: WebPCoder(), options: DecodeOptions(firstFrameOnly: true)).checksum == oriented,
                        "\(entry): the EXIF chunk's orientation")
            }
        }
    }

    @Test func everyBindingFrameOfTheCorpusMatches() async throws {
        let rows = Corpus.frames.filter { $0.path.hasPrefix("webp/") && $0.binding }
        #expect(rows.count >= 42)
        for (path, frames) in Dictionary(grouping: rows, by: \.path) {
            let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
            let (image, checksums) = try await offThePool {
                let image = try WebPCoder().decode(data)
                return (image, image.frames.map { $0.image.rgbaSHA256() })
            }
            let all = image.frames
            #expect(all.count == frames[0].frameCount, "\(path)")
            #expect(image.loopCount == frames[0].loop ?? 0, "\(path)")
            for row in frames where row.index < all.count {
                #expect(checksums[row.index] == row.rgbaSHA256, "\(path) frame \(row.index)")
                #expect(all[row.index].duration == .milliseconds(row.durationMilliseconds ?? 0), "\(path) frame \(row.index)")
            }
        }
    }

    @Test func aThumbnailIsScaledOnLoad() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/vp80-00-comprehensive-008.webp"))
        let full = try WebPCoder().decode(data)
        let thumbnail = try WebPCoder().decode(data, options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 128, height: 128)))
        #expect(thumbnail.size == DecodeOptions(thumbnailPixelSize: PixelSize(width: 128, height: 128)).outputSize(forSource: full.size))
        #expect(max(thumbnail.width, thumbnail.height) == 128)
    }

    @Test func losslessRoundTripsExactlyAndLossyStaysClose() throws {
        let source = try WebPCoder().decode(try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp")))
        let lossless = try WebPCoder().decode(try WebPCoder().encode(source, as: .webp, options: EncodeOptions(compressionQuality: 1)))
        #expect(lossless.rgbaSHA256() == source.rgbaSHA256())
        let lossy = try WebPCoder().decode(try WebPCoder().encode(source, as: .webp, options: EncodeOptions(compressionQuality: 0.9)))
        #expect(try psnr(source, lossy) > 35)
        let small = try WebPCoder().decode(try WebPCoder().encode(source, as: .webp, options: EncodeOptions(maxPixelSize: 16)))
        #expect(max(small.width, small.height) == 16)
        let alpha = try Image(width: 2, height: 1, pixelFormat: .rgba8, pixels: [255, 0, 0, 0, 0, 255, 0, 255])
        let decoded = try WebPCoder().decode(try WebPCoder().encode(alpha, as: .webp, options: EncodeOptions(compressionQuality: 1)))
        #expect(decoded.pixelFormat == .rgba8 && decoded.rgbaSHA256() == alpha.rgbaSHA256())
    }

    @Test func badInputIsATypedError() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp"))
        for cut in [12, 30, data.count / 2] {
            #expect(throws: ImageCodingError.self) { try WebPCoder().decode(data.prefix(cut)) }
        }
        // libwebp decodes damaged lossy partitions into wrong pixels without an error; a damaged frame
        // header (the VP8 start code and sizes) it refuses.
        var corrupt = data
        for index in 20..<30 { corrupt[index] ^= 0x5A }
        #expect(throws: ImageCodingError.self) { try WebPCoder().decode(corrupt) }
        #expect(throws: ImageCodingError.unsupportedFormat(.png)) { try WebPCoder().decode(try encodedPicture()) }
        #expect(throws: ImageCodingError.imageTooLarge(width: 128, height: 128, limit: 100)) {
            try WebPCoder().decode(try WebPCoder().encode(try Image(width: 128, height: 128, pixelFormat: .rgb8,
                                                                    pixels: [UInt8](repeating: 9, count: 128 * 128 * 3)),
                                                          as: .webp), options: DecodeOptions(pixelCountLimit: 100))
        }
    }

    @Test func anAnimationIsBoundedAndCanBeReadAsItsFirstFrame() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/pillow/iss634.webp"))
        #expect(throws: ImageCodingError.self) { try WebPCoder().decode(data, options: DecodeOptions(maxFrameCount: 41)) }
        let first = try WebPCoder().decode(data, options: DecodeOptions(firstFrameOnly: true, maxFrameCount: 1))
        #expect(!first.isAnimated)
        #expect(try WebPCoder().decode(data).frames.count == 42)
    }

    @Test func theManagerLoadsWebPOnceRegistered() async throws {
        let server = try TestHTTPServer()
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp"))
        server.route("/a.webp", TestResponse(headers: [("Content-Type", "image/webp")], body: data))
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let coders = CoderRegistry()
        coders.add(WebPCoder())
        let cache = ImageCache(directory: directory.url, config: ImageCacheConfig(diskSweepInterval: nil), coders: coders)
        let manager = WebImageManager(cache: cache, loader: Downloader(), coders: coders)
        let url = server.url("/a.webp")
        let first = try await manager.loadImage(url: url, options: .waitStoreCache)
        #expect(first.image.format == .webp)
        await cache.clear(.memory)
        let second = try await manager.loadImage(url: url)
        #expect(second.cacheType == .disk && second.image.rgbaSHA256() == first.image.rgbaSHA256())
        #expect(server.requestCount(for: "/a.webp") == 1)
    }
}

extension WebPCoderTests {
    @Test func anAnimationRoundTripsLosslesslyWithDurationsAndLoopCount() throws {
        let animation = try APNGTests.animation(frames: 4, loopCount: 5)
        let data = try WebPCoder().encode(animation, as: .webp, options: EncodeOptions(isLossless: true))
        let decoded = try WebPCoder().decode(data)
        #expect(decoded.frames.count == 4 && decoded.loopCount == 5)
        #expect(decoded.frames.map(\.storedDuration) == animation.frames.map(\.storedDuration))
        #expect(decoded.frames.map { $0.image.rgbaSHA256() } == animation.frames.map { $0.image.rgbaSHA256() })
        let firstOnly = try WebPCoder().decode(try WebPCoder().encode(animation, as: .webp, options: EncodeOptions(isLossless: true, firstFrameOnly: true)))
        #expect(!firstOnly.isAnimated && firstOnly.rgbaSHA256() == animation.rgbaSHA256())
    }

    @Test func aLossyAnimationStaysCloseAndEveryEffortDecodes() async throws {
        let (photo, darker, decoded, efforts) = try await offThePool {
            let photo = try EncodeOptionsTests.photo()
            var halved: [UInt8] = []
            for y in 0..<photo.height { photo.withUnsafeRow(y) { halved += $0.map { $0 / 2 } } }
            let darker = try Image(width: photo.width, height: photo.height, pixelFormat: photo.pixelFormat, pixels: halved)
            let animation = try Image(frames: [ImageFrame(image: photo, duration: .milliseconds(100)),
                                               ImageFrame(image: darker, duration: .milliseconds(200))], loopCount: 0)
            let decoded = try WebPCoder().decode(try WebPCoder().encode(animation, as: .webp, options: EncodeOptions(compressionQuality: 0.9)))
            // Lossless at the highest effort takes seconds on a photo: a 128x128 image shows every effort works.
            let small = try WebPCoder().decode(try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp")))
            let efforts = try [0.0, 0.5, 1.0].map { effort in
                try WebPCoder().decode(try WebPCoder().encode(small, as: .webp, options: EncodeOptions(isLossless: true, compressionEffort: effort))).rgbaSHA256()
                    == small.rgbaSHA256()
            }
            return (photo, darker, decoded, efforts)
        }
        #expect(decoded.frames.count == 2 && decoded.loopCount == 0)
        #expect(try psnr(photo, decoded.frames[0].image) > 30)
        #expect(try psnr(darker, decoded.frames[1].image) > 30)
        #expect(efforts == [true, true, true], "lossless at every effort")
    }
}

extension WebPCoderTests {
    /// Feeds `data` in 1 KB chunks and returns the final image and how many partial images showed.
    static func fedInChunks(_ data: Data, options: DecodeOptions = DecodeOptions()) throws -> (Image, Int) {
        let decoder = WebPCoder().makeIncrementalDecoder(options: options)
        var partials = 0
        for start in stride(from: 0, to: data.count, by: 1024) {
            try decoder.append(data[start..<min(start + 1024, data.count)])
            if decoder.makePartialImage() != nil { partials += 1 }
        }
        return (try decoder.finish(), partials)
    }

    @Test func anIncrementalDecodeFedInOneKilobyteChunksEndsEqualToTheFullDecode() async throws {
        let paths = ["webp/valid/libwebp-test-data/test.webp", "webp/valid/libwebp-test-data/lossless_vec_1_0.webp",
                     "webp/valid/pillow/iss634.webp", "webp/valid/libwebp-test-data/vp80-00-comprehensive-008.webp"]
        for path in paths {
            let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
            for options in [DecodeOptions(), DecodeOptions(thumbnailPixelSize: PixelSize(width: 40, height: 40))] {
                let full = try WebPCoder().decode(data, options: options)
                let (final, _) = try await offThePool { try Self.fedInChunks(data, options: options) }
                #expect(final.size == full.size && final.pixelFormat == full.pixelFormat, "\(path)")
                #expect(final.frames.map(\.image.pixels) == full.frames.map(\.image.pixels), "\(path)")
            }
        }
        // A larger lossy photo shows rows before its last byte arrives.
        let photo = try WebPCoder().encode(try EncodeOptionsTests.photo(), as: .webp)
        let (final, partials) = try Self.fedInChunks(photo)
        #expect(partials > 1)
        #expect(final.rgbaSHA256() == (try WebPCoder().decode(photo)).rgbaSHA256())
    }

    @Test func anIncrementalDecodeOfBadBytesFailsAsTheFullDecodeDoes() throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp"))
        let truncated = data.prefix(data.count * 2 / 3)
        #expect(throws: ImageCodingError.truncatedData(format: .webp)) { try Self.fedInChunks(Data(truncated)) }
        #expect(throws: ImageCodingError.self) { try WebPCoder().decode(Data(truncated)) }
        let decoder = WebPCoder().makeIncrementalDecoder(options: DecodeOptions(pixelCountLimit: 100))
        try decoder.append(data)
        #expect(decoder.makePartialImage() == nil, "nothing is decoded (or allocated) past the limit")
        #expect(throws: ImageCodingError.imageTooLarge(width: 128, height: 128, limit: 100)) { try decoder.finish() }
    }
}

extension WebPCoderTests {
    /// fuzz-webp: the incremental decoder disagreed with the full decode. WebPIDecoder finished images
    /// whose RIFF container WebPDecode calls truncated, refused streams WebPDecode calls truncated, and
    /// read a partial file's headers differently from the whole file's (a 2818176-pixel-wide image the
    /// full decode calls corrupt). Three inputs as found, and a crafted one: a RIFF size past the end.
    @Test(arguments: [
        "UklGRjAAAQBXRUJQVlA4TCQAAAAvD8ADEJ1EwUFOTUaj/aEREhD+HxdnsT3++3/Af4JJmmo7Bsled98B",
        "UklGRmIAAABXRUJQVlA4IEQAAAAwAwCdASoBAA0AAEcIhYWIhYSIAgICdaoD27FIXf/MD3AASUNNVAoAAAB0ZXN0MXgxMwAA",
        "UklGRi4EAABXRUJQVlA4TDsAAAAvD8ADEDECSVu87Y/of3wWBY/+h0Rp20ZQ9l888Oh/WEFycmFo8y8gSXwePSeYpKm2YxCbJH9pvhLPAQA=",
        "crafted",
    ])
    func anIncrementalDecodeGivesTheFullDecodesVerdict(_ input: String) throws {
        var data: Data
        if input == "crafted" {
            data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp"))
            let declared = UInt32(data.count - 8 + 100).littleEndian
            data.replaceSubrange(4..<8, with: withUnsafeBytes(of: declared) { Data($0) })
        } else {
            data = try #require(Data(base64Encoded: input))
        }
        let full = Result { try WebPCoder().decode(data) }
        for chunk in [1, 7, data.count] {
            let decoder = WebPCoder().makeIncrementalDecoder(options: DecodeOptions())
            let incremental = Result { () throws -> Image in
                for start in stride(from: 0, to: data.count, by: chunk) { try decoder.append(data[start..<min(start + chunk, data.count)]) }
                return try decoder.finish()
            }
            switch (full, incremental) {
            case (.success(let a), .success(let b)): #expect(a.pixels == b.pixels)
            case (.failure(let a), .failure(let b)): #expect("\(a)" == "\(b)", "chunks of \(chunk)")
            default: Issue.record("chunks of \(chunk): full \(full), incremental \(incremental)")
            }
        }
    }
}

extension WebPCoderTests {
    /// fuzz-webp: a partial image asked for once WebPIDecoder had the whole bitstream, but before the
    /// RIFF container's last bytes arrived, ended the decode early and for good (truncated), where the
    /// full decode of the whole file succeeds.
    @Test func aPartialImageBeforeTheContainerEndsDoesNotEndTheDecode() throws {
        var data = try Data(contentsOf: Corpus.root.appendingPathComponent("webp/valid/libwebp-test-data/test.webp"))
        // Trailing padding the RIFF size counts (an unknown chunk after the image).
        data.append(contentsOf: Array("JUNK".utf8) + [4, 0, 0, 0, 1, 2, 3, 4])
        let declared = UInt32(data.count - 8).littleEndian
        data.replaceSubrange(4..<8, with: withUnsafeBytes(of: declared) { Data($0) })
        let full = try WebPCoder().decode(data)
        let decoder = WebPCoder().makeIncrementalDecoder(options: DecodeOptions())
        try decoder.append(data.prefix(data.count - 6))
        #expect(decoder.makePartialImage() != nil)
        try decoder.append(data.suffix(6))
        #expect(try decoder.finish().pixels == full.pixels)
    }
}
