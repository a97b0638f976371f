import Foundation
import Testing
@testable import WebImage

@Suite struct BestFormatTests {
    let coders = ServerFixture.coders

    func size(_ picture: Image, _ format: ImageFormat, lossless: Bool = false) throws -> Int {
        var options = EncodeOptions()
        options.isLossless = lossless
        return try coders.encode(picture, as: format, options: options).count
    }

    @Test func aFlatPictureTriesLosslessEncodesAndKeepsTheSmallest() throws {
        let flat = try QualityPictures.flat()
        let best = BestFormat(candidates: [.jpeg, .png, .webp])
        let choice = try best.encode(flat, options: EncodeOptions(), coders: coders)
        let sizes = [try size(flat, .jpeg), try size(flat, .webp), try size(flat, .png), try size(flat, .webp, lossless: true)]
        #expect(choice.data.count == sizes.min() && choice.formatsTried == 4, "\(choice.format): \(choice.data.count) of \(sizes)")
        #expect(choice.isLossless, "a flat picture is smallest lossless")
    }

    @Test func aGrainyPictureTriesOnlyLossyEncodes() throws {
        let grainy = try QualityPictures.grainy()
        let choice = try BestFormat(candidates: [.jpeg, .png, .webp]).encode(grainy, options: EncodeOptions(), coders: coders)
        #expect(!choice.isLossless && choice.formatsTried == 2)
        #expect(choice.data.count == min(try size(grainy, .jpeg), try size(grainy, .webp)))
    }

    @Test func candidatesComeFromAcceptAndMustHoldThePicture() throws {
        #expect(BestFormat(accept: "image/avif,image/webp,*/*", coders: coders).candidates == [.jpeg, .png, .gif, .avif, .webp])
        #expect(BestFormat(accept: nil, coders: coders).candidates == [.jpeg, .png, .gif])
        let withAlpha = try QualityPictures.flat().converted(to: .rgba8)
        let choice = try BestFormat(candidates: [.jpeg, .png]).encode(withAlpha, options: EncodeOptions(), coders: coders)
        #expect(choice.format == .png, "JPEG cannot hold alpha")
    }

    @Test func aLargePictureIsEncodedOnce() throws {
        let choice = try BestFormat(candidates: [.jpeg, .png, .webp], maxPixelCount: 1000)
            .encode(try QualityPictures.grainy(), options: EncodeOptions(), coders: coders)
        #expect(choice.formatsTried == 1 && choice.format == .webp, "the lossy format that usually wins")
    }

    @Test func theManagerServesAndCachesTheChoice() async throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let source = directory.url.appendingPathComponent("flat.png")
        try coders.encode(try QualityPictures.flat(), as: .png).write(to: source)
        let manager = WebImageManager(cache: ImageCache(directory: directory.url.appendingPathComponent("cache")), loader: FileLoader(),
                                      coders: coders)
        let format = VariantFormat.best(BestFormat(accept: "image/webp", coders: coders))
        let cold = try await manager.loadVariant(url: source, format: format)
        let warm = try await manager.loadVariant(url: source, format: format)
        #expect(cold.cacheType == .none && warm.cacheType == .memory && warm.data == cold.data)
        #expect(manager.variantCacheKey(for: source, format: format) != manager.variantCacheKey(for: source, format: .best(BestFormat(accept: nil, coders: coders))),
                "one variant per Accept class")
        await manager.shutdown()
    }
}
