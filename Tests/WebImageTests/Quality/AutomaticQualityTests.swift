import Foundation
import Testing
@testable import WebImage

@Suite struct AutomaticQualityTests {
    let coders = ServerFixture.coders

    func difference(_ picture: Image, atQuality quality: Int, as format: ImageFormat = .jpeg) throws -> Double {
        let data = try coders.encode(picture, as: format, options: EncodeOptions(compressionQuality: Double(quality) / 100))
        return try DSSIM.difference(between: picture, and: coders.decode(data))
    }

    @Test func complexityTellsIllustrationsFromGrainyPhotographs() throws {
        let flat = try ImageComplexity.measure(QualityPictures.flat())
        let grainy = try ImageComplexity.measure(QualityPictures.grainy())
        #expect(flat < 2 && flat < BestFormat.defaultComplexityThreshold && grainy > 12, "flat \(flat), grainy \(grainy)")
    }

    /// The target is what quality 50 gives: the search must land at or under the target, near 50 or
    /// below, in a bisection's encodes. (Not exactly at or below 50: WebP's DSSIM is not monotonic in its
    /// quality from one step to the next, so a bisection may keep 52 whose file looks as good as 50's.)
    @Test(arguments: [ImageFormat.jpeg, .webp])
    func theDSSIMSearchFindsALowQualityThatMeetsTheTarget(format: ImageFormat) throws {
        let photo = try QualityPictures.grainy()
        let target = try difference(photo, atQuality: 50, as: format)
        var options = EncodeOptions()
        options.automaticQuality = AutomaticQuality(method: .dssim(target: target, allowedError: 0), minQuality: 10, maxQuality: 95)
        let result = try coders.encodeSearchingQuality(photo, as: format, options: options)
        let quality = try #require(result.quality)
        #expect(quality <= 55 && quality >= 10, "\(format): chose \(quality) for the target of quality 50")
        #expect(try #require(result.difference) <= target + 1e-9)
        #expect(result.encodes <= 15, "2⌈log₂ 86⌉ + 1 encodes at most: \(result.encodes)")
        #expect(try DSSIM.difference(between: photo, and: coders.decode(result.data)) == result.difference)
        #expect(try coders.encode(photo, as: format, options: options) == result.data, "encode(_:as:options:) searches the same way")
    }

    @Test func aFlatPictureGetsALowerQualityThanAGrainyOne() throws {
        var options = EncodeOptions()
        options.automaticQuality = AutomaticQuality(method: .dssim(target: 0.004, allowedError: 0.0005), minQuality: 20, maxQuality: 95)
        let flat = try coders.encodeSearchingQuality(QualityPictures.flat(), as: .jpeg, options: options)
        let grainy = try coders.encodeSearchingQuality(QualityPictures.grainy(), as: .jpeg, options: options)
        let (flatQuality, grainyQuality) = (try #require(flat.quality), try #require(grainy.quality))
        #expect(flatQuality < grainyQuality, "flat \(flatQuality), grainy \(grainyQuality)")
    }

    @Test func theDefaultsSearchSeventyToEightyInABoundedNumberOfEncodes() throws {
        var options = EncodeOptions()
        options.automaticQuality = .dssim()
        for picture in [try QualityPictures.flat(), try QualityPictures.grainy()] {
            let result = try coders.encodeSearchingQuality(picture, as: .jpeg, options: options)
            let quality = try #require(result.quality)
            #expect((70...80).contains(quality) && result.encodes <= 9, "\(quality), \(result.encodes) encodes")
        }
        #expect(AutomaticQuality.dssim().qualityRange(for: .avif) == 60...65, "AVIF's own bounds, as imgproxy")
    }

    @Test func theSizeSearchKeepsTheHighestQualityThatFits() throws {
        let photo = try QualityPictures.grainy()
        let atSixty = try coders.encode(photo, as: .jpeg, options: EncodeOptions(compressionQuality: 0.6)).count
        var options = EncodeOptions()
        options.automaticQuality = AutomaticQuality(method: .size(maxBytes: atSixty), minQuality: 10, maxQuality: 95)
        let result = try coders.encodeSearchingQuality(photo, as: .jpeg, options: options)
        let chosen = try #require(result.quality)
        #expect(result.data.count <= atSixty && chosen >= 60, "\(chosen): \(result.data.count) of \(atSixty)")
        let next = try coders.encode(photo, as: .jpeg, options: EncodeOptions(compressionQuality: Double(chosen + 1) / 100))
        #expect(next.count > atSixty, "one quality more would not fit")
        options.automaticQuality = AutomaticQuality(method: .size(maxBytes: 100), minQuality: 10, maxQuality: 95)
        let tiny = try coders.encodeSearchingQuality(photo, as: .jpeg, options: options)
        let lowest = try coders.encode(photo, as: .jpeg, options: EncodeOptions(compressionQuality: 0.1))
        #expect(tiny.quality == 10 && tiny.data == lowest, "nothing fits: the lowest quality's file")
    }

    @Test func losslessAndQualitylessEncodesDoNotSearch() throws {
        var options = EncodeOptions()
        options.automaticQuality = .dssim()
        let photo = try QualityPictures.grainy()
        for (format, lossless) in [(ImageFormat.png, false), (.gif, false), (.webp, true)] {
            options.isLossless = lossless
            let result = try coders.encodeSearchingQuality(photo, as: format, options: options)
            #expect(result.quality == nil && result.encodes == 1, "\(format)")
        }
        options.isLossless = false
        options.automaticQuality?.maxPixelCount = 100
        #expect(try coders.encodeSearchingQuality(photo, as: .jpeg, options: options).quality == nil, "above the pixel limit: the fixed quality")
    }

    @Test func aVariantIsKeyedByItsAutomaticQuality() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let manager = WebImageManager(cache: ImageCache(directory: directory.url), loader: Downloader())
        let url = URL(string: "https://example.com/a.png")!
        var first = EncodeOptions(), second = EncodeOptions()
        first.automaticQuality = .dssim(target: 0.02)
        second.automaticQuality = .dssim(target: 0.01)
        let keys = [EncodeOptions(), first, second].map { manager.variantCacheKey(for: url, format: .exactly(.jpeg), encoding: $0) }
        #expect(Set(keys).count == 3, "\(keys)")
    }
}
