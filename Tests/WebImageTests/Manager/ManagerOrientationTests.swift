import Foundation
import Testing
@testable import WebImage

/// `WebImageContext.appliesOrientation`: the stored pixels of an image with an EXIF orientation,
/// under a key of their own, never mixed up with the upright image in either direction.
@Suite struct ManagerOrientationTests {
    /// A file URL of a 40x20 PNG carrying EXIF orientation 6 (shown turned a quarter clockwise: 20x40).
    static func turnedPicture(in directory: TemporaryDirectory) throws -> URL {
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.url.appendingPathComponent("turned.png")
        try ImgproxyCasesTests.source(PixelSize(width: 40, height: 20), orientation: .right).write(to: url)
        return url
    }

    @Test func storedAndUprightLoadsOfOneURLKeepTheirOwnPixels() async throws {
        let fixture = ManagerFixture()
        let files = TemporaryDirectory()
        defer { files.remove() }
        let url = try Self.turnedPicture(in: files)
        var stored = WebImageContext()
        stored.appliesOrientation = false
        for round in 0..<2 {   // the second round comes from the caches
            let upright = try await fixture.manager.loadImage(url: url)
            #expect(upright.image.size == PixelSize(width: 20, height: 40) && upright.image.orientation == .up, "round \(round)")
            let raw = try await fixture.manager.loadImage(url: url, context: stored)
            #expect(raw.image.size == PixelSize(width: 40, height: 20) && raw.image.orientation == .right, "round \(round): \(raw.image.size) \(raw.image.orientation) \(raw.cacheType)")
        }
        #expect(fixture.manager.cacheKey(for: url, context: stored) == CacheKeys.inserting("Unoriented", into: url.absoluteString))
    }

    @Test func aStoredOrientationTransformDoesNotStartFromTheUprightOriginalInMemory() async throws {
        let fixture = ManagerFixture()
        let files = TemporaryDirectory()
        defer { files.remove() }
        let url = try Self.turnedPicture(in: files)
        _ = try await fixture.manager.loadImage(url: url)   // the upright original, now in memory
        var options = ProcessingOptions()
        options.autoRotate = false
        options.width = 20
        var context = WebImageContext(transformer: ProcessingTransformer(options: options))
        context.appliesOrientation = false
        let result = try await fixture.manager.loadImage(url: url, context: context)
        #expect(result.image.size == PixelSize(width: 20, height: 10), "fitted from the stored 40x20, not the upright 20x40")
    }
}
