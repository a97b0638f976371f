import Foundation
import Testing
@testable import WebImage

/// The limits a server sets in one place: source bytes (over HTTP and from a file), source pixels,
/// animation frames, output pixels. Each fails with its typed error and caches nothing.
@Suite struct ManagerLimitsTests: ManagerServerSuite {
    let server: TestHTTPServer
    let picture: Data

    init() throws {
        server = try TestHTTPServer()
        picture = try encodedPicture()   // 64×48 PNG
    }

    func fixture(_ limits: ImageLimits) -> ManagerFixture {
        ManagerFixture(config: WebImageManagerConfig(limits: limits))
    }

    @Test func aSourceOverTheByteLimitIsRefusedOverHTTPAndFromAFile() async throws {
        serve("/big.png")
        let limited = fixture(ImageLimits(maxSourceBytes: 100))
        let url = server.url("/big.png")
        await #expect(throws: WebImageError.responseTooLarge(limit: 100, url: url)) { try await limited.manager.loadImage(url: url) }
        #expect(await limited.cache.containsImage(forKey: url.absoluteString, cacheType: .all) == .none)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.url.appendingPathComponent("big.png")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        try picture.write(to: file)
        await #expect(throws: WebImageError.responseTooLarge(limit: 100, url: file)) { try await limited.manager.loadImage(url: file) }
        let roomy = fixture(ImageLimits(maxSourceBytes: picture.count))
        #expect(try await roomy.manager.loadImage(url: url).image.width == 64, "a body of exactly the limit loads")
    }

    @Test func aSourceOverThePixelLimitIsRefusedBeforeDecoding() async throws {
        serve("/pixels.png")
        let limited = fixture(ImageLimits(maxSourcePixels: 1000))
        let url = server.url("/pixels.png")
        await #expect(throws: WebImageError.decodingFailed(.imageTooLarge(width: 64, height: 48, limit: 1000), url: url)) {
            try await limited.manager.loadImage(url: url)
        }
    }

    @Test func anAnimationOverTheFrameLimitIsRefused() async throws {
        let frames = try (0..<3).map { index in
            ImageFrame(image: try Image(width: 4, height: 4, pixelFormat: .gray8, pixels: [UInt8](repeating: UInt8(index * 90), count: 16)),
                       duration: .milliseconds(50))
        }
        serve("/anim.gif", try CoderRegistry.shared.encode(try Image(frames: frames), as: .gif), headers: [("Content-Type", "image/gif")])
        let limited = fixture(ImageLimits(maxFrameCount: 2))
        let url = server.url("/anim.gif")
        do {
            _ = try await limited.manager.loadImage(url: url)
            Issue.record("three frames passed a limit of two")
        } catch let error as WebImageError {
            guard case .decodingFailed(.animationTooLarge(let count, _, let limit, _), url) = error else { Issue.record("got \(error)"); return }
            #expect(count == 3 && limit == 2)
        }
    }

    @Test func aVariantOverTheOutputPixelLimitIsRefusedBeforeEncoding() async throws {
        serve("/out.png")
        let limited = fixture(ImageLimits(maxOutputPixels: 1000))
        let url = server.url("/out.png")
        await #expect(throws: WebImageError.encodingFailed(.imageTooLarge(width: 64, height: 48, limit: 1000), url: url)) {
            try await limited.manager.loadVariant(url: url, format: .exactly(.png))
        }
        #expect(limited.manager.statistics.encodes == 0)
        let fitted = try await limited.manager.loadVariant(url: url, format: .exactly(.png), encoding: EncodeOptions(maxPixelSize: 32))
        #expect(fitted.pixelSize == PixelSize(width: 32, height: 24), "a variant scaled under the limit is made")
    }
}
