import Foundation
import Testing
@testable import WebImage
import WebImageWebP

/// A variant's per-format settings: the encode uses the entry of the format it writes (decided once,
/// by the manager, after the image is known), and the settings are part of the variant's key.
@Suite struct VariantEncodingTests {
    @Test func theEncodeUsesItsFormatsEntryAndTheKeyNamesTheTable() async throws {
        let coders = CoderRegistry(coders: [PNGCoder(), JPEGCoder(), WebPCoder()])
        let fixture = ManagerFixture(coders: coders)
        let files = TemporaryDirectory()
        defer { files.remove() }
        try FileManager.default.createDirectory(at: files.url, withIntermediateDirectories: true)
        let url = files.url.appendingPathComponent("photo.png")
        try encodedPicture(width: 120, height: 80, as: .png).write(to: url)
        var table = EncodeOptions(compressionQuality: 0.9)
        table.formatQualities = [.webp: 0.3]
        let fromTable = try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), encoding: table)
        let direct = try await fixture.manager.loadVariant(url: url, format: .exactly(.webp), encoding: EncodeOptions(compressionQuality: 0.3))
        #expect(fromTable.data == direct.data, "the WebP entry, not the 0.9 default, was used")
        let source = try await fixture.manager.loadVariant(url: url, format: .source, encoding: table)
        #expect(source.format == .png, "the source's own format: a PNG stays PNG")
        let plain = fixture.manager.variantCacheKey(for: url, format: .exactly(.webp), encoding: EncodeOptions(compressionQuality: 0.9))
        #expect(fixture.manager.variantCacheKey(for: url, format: .exactly(.webp), encoding: table) != plain)
    }

    @Test func aCachedVariantComesOnlyFromTheCachesAndReportsNothing() async throws {
        let fixture = ManagerFixture()
        let observer = RecordingObserver()
        fixture.manager.observer = observer
        let files = TemporaryDirectory()
        defer { files.remove() }
        try FileManager.default.createDirectory(at: files.url, withIntermediateDirectories: true)
        let url = files.url.appendingPathComponent("photo.png")
        try encodedPicture(width: 60, height: 40, as: .png).write(to: url)
        let context = WebImageContext(thumbnailPixelSize: PixelSize(width: 30, height: 30))
        #expect(await fixture.manager.cachedVariant(url: url, format: .exactly(.png), context: context) == nil, "a miss loads nothing")
        #expect(fixture.manager.statistics.loads == 0 && observer.events.isEmpty, "and reports nothing")
        let made = try await fixture.manager.loadVariant(url: url, format: .exactly(.png), options: .waitStoreCache, context: context)
        let cached = await fixture.manager.cachedVariant(url: url, format: .exactly(.png), context: context)
        #expect(cached?.data == made.data && cached?.cacheType == .memory)
        #expect(fixture.manager.statistics.encodes == 1)
    }
}
