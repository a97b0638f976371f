import Foundation
import Testing
@testable import WebImage

/// DSSIM against values computed by a second, independent implementation (float64 NumPy, written from
/// the algorithm's description; it reproduces the values `dssim`'s own tests lock, such as 0.000948392
/// for its two test pictures, to within 2e-6).
@Suite struct DSSIMTests {
    /// Each channel (or alpha) changed as named; the expected DSSIM against the plain ramp.
    static let reference: [(name: String, change: @Sendable (inout [UInt8]) -> Void, dssim: Double)] = [
        ("colour + 10", { pixels in for i in pixels.indices where i % 4 != 3 { pixels[i] = UInt8(min(Int(pixels[i]) + 10, 255)) } }, 0.0012214518),
        ("colour & ~15", { pixels in for i in pixels.indices where i % 4 != 3 { pixels[i] &= ~15 } }, 0.0027417786),
        ("alpha 128", { pixels in for i in pixels.indices where i % 4 == 3 { pixels[i] = 128 } }, 0.4944332023),
        ("alpha 0", { pixels in for i in pixels.indices where i % 4 == 3 { pixels[i] = 0 } }, 1.0691576943),
    ]

    @Test func valuesMatchTheSecondImplementation() throws {
        let reference = try DSSIM.Reference(QualityPictures.ramp())
        for entry in Self.reference {
            let value = try reference.difference(to: QualityPictures.ramp(entry.change))
            #expect(abs(value - entry.dssim) < 2e-5, "\(entry.name): \(value), expected \(entry.dssim)")
        }
    }

    @Test func aPictureIsIdenticalToItselfWhateverItsPixelFormat() throws {
        let ramp = try QualityPictures.ramp()
        #expect(try DSSIM.difference(between: ramp, and: ramp) == 0)
        #expect(try DSSIM.difference(between: ramp, and: ramp.converted(to: .rgb8)) == 0, "opaque RGBA and RGB are the same picture")
        let photo = try QualityPictures.grainy()
        #expect(try DSSIM.difference(between: photo, and: photo.converted(to: .rgba16)) == 0)
    }

    @Test func lowerQualitiesLookMoreDifferent() throws {
        let photo = try QualityPictures.grainy()
        let reference = try DSSIM.Reference(photo)
        let values = try [20, 50, 90].map { quality in
            try reference.difference(to: CoderRegistry.shared.decode(
                CoderRegistry.shared.encode(photo, as: .jpeg, options: EncodeOptions(compressionQuality: Double(quality) / 100))))
        }
        #expect(values[0] > values[1] && values[1] > values[2] && values[2] > 0, "\(values)")
    }

    @Test func picturesOfOtherSizesAreRefused() throws {
        let reference = try DSSIM.Reference(QualityPictures.flat())
        #expect(throws: ImageCodingError.self) { try reference.difference(to: QualityPictures.flat(width: 80, height: 60)) }
    }

    @Test func largePicturesAreComparedWithinAMegapixel() {
        let size = DSSIM.comparedSize(for: PixelSize(width: 4000, height: 3000))
        #expect(size.width * size.height <= DSSIM.maxComparedPixels && size.width > 1150 && abs(Double(size.width) / Double(size.height) - 4.0 / 3.0) < 0.01)
        #expect(DSSIM.comparedSize(for: PixelSize(width: 1024, height: 1024)) == PixelSize(width: 1024, height: 1024))
    }
}
