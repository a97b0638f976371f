import Foundation
import Testing
@testable import WebImage
import WebImageWebP

@Suite struct EncodeOptionsTests {
    static func photo() throws -> Image {
        try JPEGCoder().decode(try Data(contentsOf: Corpus.root.appendingPathComponent("jpeg/valid/pillow/flower.jpg")))
    }

    @Test(arguments: [ImageFormat.jpeg, .webp])
    func maxFileSizeWritesTheHighestQualityThatFits(_ format: ImageFormat) async throws {
        let coder: any ImageCoder = format == .jpeg ? JPEGCoder() : WebPCoder()
        // Encoding is CPU work: off the cooperative pool, the results checked here.
        let (photo, best, worst, fitted, tiny, unchanged) = try await offThePool {
            let photo = try Self.photo()
            let best = try coder.encode(photo, as: format, options: EncodeOptions(compressionQuality: 0.9))
            let worst = try coder.encode(photo, as: format, options: EncodeOptions(compressionQuality: 0))
            let fitted = try coder.encode(photo, as: format, options: EncodeOptions(compressionQuality: 0.9, maxFileSize: (best.count + worst.count) / 2))
            let tiny = try coder.encode(photo, as: format, options: EncodeOptions(maxFileSize: 10))
            let unchanged = try coder.encode(photo, as: format, options: EncodeOptions(compressionQuality: 0.9, maxFileSize: best.count))
            return (photo, best, worst, fitted, tiny, unchanged)
        }
        #expect(fitted.count <= (best.count + worst.count) / 2)
        #expect(fitted.count > worst.count, "a quality above the lowest fits, so the lowest is not the answer")
        #expect(try coder.decode(fitted, options: DecodeOptions()).size == photo.size)
        // Under a limit nothing reaches, the lowest quality's file comes back rather than an error.
        #expect(tiny == worst)
        // A limit the first encode already meets costs one encode and changes nothing.
        #expect(unchanged == best)
    }

    @Test func theSearchBisectsQualityAndStopsWithinAHundredth() throws {
        var asked: [Double] = []
        // A fake encoder whose size grows with quality: 1000 bytes per 0.01.
        let result = EncodeOptions(compressionQuality: 0.9, maxFileSize: 55_500).encodingWithinMaxFileSize { quality in
            asked.append(quality)
            return Data(count: Int((quality * 100).rounded()) * 1000)
        }
        #expect(result.count == 55_000)
        #expect(asked.count <= 10)
        #expect(asked.prefix(2) == [0.9, 0])
        let lossless = EncodeOptions(isLossless: true, maxFileSize: 1).encodingWithinMaxFileSize { _ in Data(count: 5) }
        #expect(lossless.count == 5, "lossless encodes ignore maxFileSize")
    }

    @Test func framesOfAnImageHonourFirstFrameOnlyAndMaxPixelSize() throws {
        let animation = try APNGTests.animation(frames: 3, width: 40, height: 20)
        #expect(try EncodeOptions().frames(of: animation).count == 3)
        #expect(try EncodeOptions(firstFrameOnly: true).frames(of: animation).count == 1)
        let scaled = try EncodeOptions(maxPixelSize: 10).frames(of: animation)
        #expect(scaled.map(\.image.size) == Array(repeating: PixelSize(width: 10, height: 5), count: 3))
        #expect(scaled.map(\.storedDuration) == animation.frames.map(\.storedDuration))
    }

    @Test func effortAndQualityAreClampedAndDefaultToTheLibraries() {
        #expect(EncodeOptions().clampedEffort == nil)
        #expect(EncodeOptions(compressionEffort: 3).clampedEffort == 1)
        #expect(EncodeOptions(compressionEffort: .nan).clampedEffort == nil)
        #expect(EncodeOptions(compressionQuality: -1).clampedQuality == 0)
        #expect(EncodeOptions(compressionQuality: .nan).clampedQuality == 0.9)
    }
}

extension EncodeOptionsTests {
    @Test func storedMillisecondsRoundDownAndNeverGoNegative() {
        let image = try? Image(width: 1, height: 1, pixelFormat: .gray8, pixels: [0])
        let frame = { (duration: Duration) in ImageFrame(image: image!, duration: duration).storedMilliseconds }
        #expect(frame(.milliseconds(1500)) == 1500)
        #expect(frame(.microseconds(2999)) == 2)
        #expect(frame(.milliseconds(-5)) == 0)
        #expect(GIFEncoding.centiseconds(milliseconds: 15) == 2 && GIFEncoding.centiseconds(milliseconds: 10_000_000) == 65535)
    }
}

extension EncodeOptionsTests {
    @Test func perFormatSettingsApplyToTheirFormatOnly() {
        var options = EncodeOptions(compressionQuality: 0.8, compressionEffort: 0.5)
        options.formatQualities = [.webp: 0.79, .avif: 0.63]
        options.formatEfforts = [.avif: 0.1]
        #expect(options.resolved(for: .jpeg).compressionQuality == 0.8 && options.resolved(for: .jpeg).compressionEffort == 0.5)
        #expect(options.resolved(for: .webp).compressionQuality == 0.79 && options.resolved(for: .webp).compressionEffort == 0.5)
        #expect(options.resolved(for: .avif).compressionQuality == 0.63 && options.resolved(for: .avif).compressionEffort == 0.1)
        #expect(options.resolved(for: .avif).formatQualities.isEmpty, "resolved options carry no table")
    }
}
