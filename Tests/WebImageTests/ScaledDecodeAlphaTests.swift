import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageWebP

/// Every decoder's scaled path (a thumbnail decode) against a premultiplied resize of its full
/// decode, on files with alpha: a scaler that filters straight alpha leaves light or dark halos round
/// shapes (libwebp's did: lossy_alpha1.webp at 64 px was off by 14.6 on average, 58 at most).
@Suite struct ScaledDecodeAlphaTests {
    static let cases: [(path: String, coder: any ImageCoder)] = [
        ("webp/valid/libwebp-test-data/lossy_alpha1.webp", WebPCoder()),
        ("webp/valid/libwebp-test-data/lossless2.webp", WebPCoder()),
        ("png/valid/pngsuite/basn6a08.png", PNGCoder()),
        ("avif/valid/av1-avif/Netflix/avis/alpha_video.avif", AVIFCoder()),
        ("gif/valid/wuffs/hat.gif", GIFCoder()),
    ]

    /// Mean and largest difference of the colour channels over pixels visible in both (alpha ≥ 32).
    static func difference(_ a: Image, _ b: Image) throws -> (mean: Double, max: Int) {
        let x = [UInt8](try a.converted(to: .rgba8).pixels), y = [UInt8](try b.converted(to: .rgba8).pixels)
        var total = 0, count = 0, largest = 0
        for index in stride(from: 0, to: min(x.count, y.count), by: 4) where x[index + 3] >= 32 && y[index + 3] >= 32 {
            for c in 0..<3 {
                let d = abs(Int(x[index + c]) - Int(y[index + c]))
                total += d
                largest = max(largest, d)
                count += 1
            }
        }
        return (count == 0 ? 0 : Double(total) / Double(count), largest)
    }

    @Test(arguments: 0..<5)
    func theScaledDecodeMatchesAPremultipliedResize(_ index: Int) throws {
        let (path, coder) = Self.cases[index]
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
        let options = DecodeOptions(thumbnailPixelSize: PixelSize(width: 24, height: 24), firstFrameOnly: true)
        let thumbnail = try coder.decode(data, options: options)
        let full = try coder.decode(data, options: DecodeOptions(firstFrameOnly: true))
        #expect(full.pixelFormat.hasAlpha, "\(path) has alpha: the case proves something")
        #expect(thumbnail.width <= 24 && thumbnail.height <= 24 && thumbnail.size != full.size)
        let reference = try Resampler.resample(try full.converted(to: .rgba8), to: thumbnail.size)
        let difference = try Self.difference(thumbnail, reference)
        #expect(difference.mean <= 2 && difference.max <= 24, "\(path): mean \(difference.mean), max \(difference.max)")
    }
}
