import Foundation
import Testing
@testable import WebImage

/// SSIMULACRA2 against the Python port on PyPI (`ssimulacra2` 0.3.0, run on the same pictures, made
/// the same way), the scorer `Benchmarks/autoquality/run.py` uses.
@Suite struct SSIMULACRA2Tests {
    static func changed(_ picture: Image, _ change: (UInt8) -> UInt8) throws -> Image {
        let rgb = try picture.converted(to: .rgb8)
        return try Image(width: rgb.width, height: rgb.height, pixelFormat: .rgb8, pixels: rgb.withUnsafePixels { Array($0) }.map(change))
    }

    @Test func scoresMatchThePyPIPort() throws {
        let ramp = try QualityPictures.ramp().converted(to: .rgb8), grainy = try QualityPictures.grainy(), flat = try QualityPictures.flat()
        let cases: [(String, Image, Image, Double)] = [
            ("ramp + 10", ramp, try Self.changed(ramp) { UInt8(min(Int($0) + 10, 255)) }, 84.94202110128046),
            ("ramp & ~15", ramp, try Self.changed(ramp) { $0 & ~15 }, -5.306258563660293),
            ("grainy & ~15", grainy, try Self.changed(grainy) { $0 & ~15 }, 72.96002871561139),
            ("flat + 10", flat, try Self.changed(flat) { UInt8(min(Int($0) + 10, 255)) }, 84.67552407477383),
            ("grainy in 8 levels", grainy, try Self.changed(grainy) { $0 / 32 * 32 }, 43.28326798608757),
        ]
        for (name, original, distorted, expected) in cases {
            let score = try SSIMULACRA2.score(of: distorted, against: original)
            #expect(abs(score - expected) < 0.05, "\(name): \(score), the PyPI port \(expected)")
        }
    }

    @Test func anIdenticalPictureScoresAHundredAndWorseEncodesScoreLower() throws {
        let photo = try QualityPictures.grainy()
        let reference = try SSIMULACRA2.Reference(photo)
        #expect(try reference.score(of: photo) == 100)
        let scores = try [30, 60, 90].map { quality in
            try reference.score(of: ServerFixture.coders.decode(
                ServerFixture.coders.encode(photo, as: .jpeg, options: EncodeOptions(compressionQuality: Double(quality) / 100))))
        }
        #expect(scores[0] < scores[1] && scores[1] < scores[2] && scores[2] < 100, "\(scores)")
    }

    @Test func tinyAndMismatchedPicturesAreRefused() throws {
        #expect(throws: ImageCodingError.self) { try SSIMULACRA2.Reference(QualityPictures.flat(width: 6, height: 6)) }
        let reference = try SSIMULACRA2.Reference(QualityPictures.flat())
        #expect(throws: ImageCodingError.self) { try reference.score(of: QualityPictures.flat(width: 80, height: 60)) }
    }

    @Test func theSearchKeepsAScoreAtOrAboveItsTarget() throws {
        let photo = try QualityPictures.grainy()
        var options = EncodeOptions()
        options.automaticQuality = AutomaticQuality(method: .ssimulacra2(score: 75, allowedError: 0), minQuality: 10, maxQuality: 95)
        let result = try ServerFixture.coders.encodeSearchingQuality(photo, as: .jpeg, options: options)
        let score = try #require(result.difference)
        #expect(score >= 75 && result.encodes <= 15, "score \(score) at q\(result.quality ?? 0), \(result.encodes) encodes")
        #expect(try SSIMULACRA2.score(of: ServerFixture.coders.decode(result.data), against: photo) == score)
    }
}
