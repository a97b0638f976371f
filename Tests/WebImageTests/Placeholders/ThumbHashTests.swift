import Foundation
import Testing
@testable import WebImage

/// ThumbHash: the same bytes as evanw's JavaScript for the same pixels, its decoder's pixels,
/// average colour and aspect ratio, validation, and a drawing that looks like the image.
@Suite struct ThumbHashTests {
    @Test(arguments: PlaceholderFixture.all)
    func encodesAsTheReferenceDoes(_ fixture: PlaceholderFixture) throws {
        let hash = ThumbHash(pixels: fixture.pixels)
        #expect(hash.base64 == fixture.thumbHashBase64, "\(fixture.name)")
        #expect(try ThumbHash(encoding: fixture.image()) == hash, "the public entry reads the same pixels")
        #expect(try ThumbHash(base64: fixture.thumbHashBase64) == hash)
    }

    @Test(arguments: PlaceholderFixture.all)
    func decodesAsTheReferenceDoes(_ fixture: PlaceholderFixture) throws {
        let hash = try ThumbHash(base64: fixture.thumbHashBase64)
        let drawing = try hash.image()
        #expect(drawing.width == fixture.thumbHashDecoded.width && drawing.height == fixture.thumbHashDecoded.height, "\(fixture.name)")
        #expect(sha256Hex([UInt8](drawing.pixels)) == fixture.thumbHashDecoded.sha256, "\(fixture.name)")
        #expect(hash.approximateAspectRatio == fixture.thumbHashAspectRatio)
        let average = hash.averageRGBA
        #expect(average.red == fixture.thumbHashAverage.r && average.green == fixture.thumbHashAverage.g)
        #expect(average.blue == fixture.thumbHashAverage.b && average.alpha == fixture.thumbHashAverage.a)
    }

    /// The solid colour where glibc's cosine and the reference's (V8's fdlibm) disagree in the last
    /// bit and the hash changes with it: AC terms of a flat image are rounding noise.
    @Test func aSolidColourNeedsTheReferencesCosine() throws {
        let hash = ThumbHash(pixels: PlaceholderFixture.all[6].pixels)
        #expect(hash.base64 != "XRgODZpwd3eBiIh4iHiIh3iACPeH", "thumbhash-python's bytes (glibc cos, banker's rounding) are not the reference's")
    }

    @Test(arguments: [[], [1, 2, 3, 4], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF]])
    func refusesBytesTooShortForTheirHeader(_ bytes: [UInt8]) {
        #expect(throws: PlaceholderError.self) { try ThumbHash(bytes: bytes) }
    }

    @Test func refusesTextThatIsNotBase64() {
        #expect(throws: PlaceholderError.self) { try ThumbHash(base64: "not base64!") }
    }

    @Test func hostileHeadersStillDrawSomething() throws {
        // A portrait header with no luminance columns: the reference would draw a 0-pixel-wide image.
        var bytes = [UInt8](repeating: 0, count: 32)
        bytes[3] = 0
        let drawing = try ThumbHash(bytes: bytes).image()
        #expect(drawing.width >= 1 && drawing.height >= 1)
    }

    /// How close a drawing is: the 64×48 gradient and a photo, drawn by ThumbHash and scaled to the
    /// same size, differ from them by less than 15 and 30 levels per channel on average (12.0 and 24.9 measured).
    @Test func aDrawingLooksLikeTheImage() throws {
        let gradient = try PlaceholderFixture.all[6].image()
        let drawing = try ThumbHash(encoding: gradient).image()
        let scaled = try Resampler.resample(gradient, to: drawing.size)
        let difference = try meanDifference(drawing, scaled)
        #expect(difference < 15, "mean difference \(difference)")
        let photo = try CoderRegistry.shared.decode(try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/flower.jpg")),
                                                    options: DecodeOptions(thumbnailPixelSize: PixelSize(width: 100, height: 100)))
        let photoDrawing = try ThumbHash(encoding: photo).image()
        let photoDifference = try meanDifference(photoDrawing, try Resampler.resample(photo, to: photoDrawing.size))
        #expect(photoDifference < 30, "mean difference \(photoDifference)")
        let ratio = Double(photo.width) / Double(photo.height)
        #expect(abs(try ThumbHash(encoding: photo).approximateAspectRatio - ratio) < 0.3, "the aspect ratio is kept")
    }
}
