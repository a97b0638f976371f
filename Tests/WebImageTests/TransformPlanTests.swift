import Foundation
import Synchronization
import Testing
@testable import WebImage

/// How many times a transformer ran.
private final class Runs: Sendable {
    let count = Atomic<Int>(0)
}

/// Records whether it ran, and plans an image of `planned` pixels whatever the source.
private struct PlanningTransformer: ImageTransformer {
    let planned: PixelSize
    let ran: Runs
    var key: String { "Planning(\(planned))" }
    func plannedSizes(for source: PixelSize) -> [PixelSize] { [planned] }
    func transform(_ image: Image, forKey key: String) throws -> Image {
        ran.count.add(1, ordering: .relaxed)
        return image
    }
}

/// Transforms are planned without touching a pixel (``ImageTransformer/plannedSizes(for:)``), and a
/// plan over ``ImageLimits/maxOutputPixels`` is refused before the source is decoded.
@Suite struct TransformPlanTests {
    @Test func everyTransformerPlansWhatItMakes() throws {
        let source = PixelSize(width: 640, height: 480)
        let image = try Image(width: 64, height: 48, pixelFormat: .rgba8, pixels: [UInt8](repeating: 90, count: 64 * 48 * 4))
        let transformers: [any ImageTransformer] = [
            ResizingTransformer(size: PixelSize(width: 30, height: 30), scaleMode: .aspectFit),
            ResizingTransformer(size: PixelSize(width: 30, height: 20), scaleMode: .aspectFill),
            ResizingTransformer(size: PixelSize(width: 70, height: 10)),
            CroppingTransformer(rect: PixelRect(x: 50, y: 40, width: 100, height: 100)),
            RotationTransformer(angle: 30), RotationTransformer(angle: 90, fitSize: false), FlippingTransformer(horizontal: true, vertical: false),
            TintTransformer(color: .white), BlurTransformer(radius: 2), RoundCornerTransformer(radius: 8),
            PipelineTransformer([ResizingTransformer(size: PixelSize(width: 32, height: 32), scaleMode: .aspectFit), RotationTransformer(angle: 90)]),
            ProcessingTransformer(options: { var options = ProcessingOptions(); (options.resizingType, options.width, options.height) = (.fill, 20, 10); return options }()),
        ]
        for transformer in transformers {
            let made = try transformer.transform(image, forKey: "")
            #expect(transformer.plannedSizes(for: image.size).last == made.size, "\(transformer.key): planned as made")
        }
        #expect(ResizingTransformer(size: PixelSize(width: 64364, height: 64364), scaleMode: .aspectFill).plannedSizes(for: source)
                == [PixelSize(width: 64364, height: 64364)])
        let pipeline = PipelineTransformer([ResizingTransformer(size: PixelSize(width: 20000, height: 20000)),
                                            ResizingTransformer(size: PixelSize(width: 10, height: 10))])
        #expect(pipeline.plannedSizes(for: source).map(\.width) == [20000, 10], "every intermediate image is planned")
        #expect(LeftHalfTransformer().plannedSizes(for: source).isEmpty, "a transformer that does not plan says nothing")
        var trimmed = ProcessingOptions()
        trimmed.trim = ProcessingOptions.Trim(threshold: 10)
        #expect(ProcessingTransformer(options: trimmed).plannedSizes(for: source).isEmpty, "trim is found in the pixels")
    }

    /// A planned image over the limit: refused with `transformFailed` before the source is decoded
    /// (its body is broken past a valid header, so a decode would have failed otherwise), and the
    /// transformer never runs.
    @Test func anAbsurdPlanIsRefusedBeforeDecoding() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        var broken = try encodedPicture(width: 640, height: 480, as: .png)
        broken.replaceSubrange(60..<broken.count, with: Data(repeating: 0xAB, count: broken.count - 60))
        server.route("/broken.png", TestResponse(headers: [("Content-Type", "image/png")], body: broken))
        let fixture = ManagerFixture()
        let ran = Runs()
        var context = WebImageContext()
        context.transformer = PlanningTransformer(planned: PixelSize(width: 64364, height: 64364), ran: ran)
        do {
            _ = try await fixture.manager.loadImage(url: server.url("/broken.png"), options: [.transformAnimatedImage], context: context)
            Issue.record("loaded")
        } catch let error as WebImageError {
            guard case .transformFailed(.invalidParameter(let reason), _) = error else { Issue.record("not refused by the plan: \(error)"); return }
            #expect(reason.contains("64364x64364"))
        }
        #expect(ran.count.load(ordering: .relaxed) == 0)
        // Within the limit the plan lets the load go on, to the decoder (which fails on the broken body).
        var fine = WebImageContext()
        fine.transformer = PlanningTransformer(planned: PixelSize(width: 10, height: 10), ran: ran)
        await #expect(throws: WebImageError.self) {
            _ = try await fixture.manager.loadImage(url: server.url("/broken.png"), options: [.transformAnimatedImage], context: fine)
        }
    }

    /// Without `.transformAnimatedImage` an image is checked once decoded, before the transform runs.
    @Test func aDecodedImageIsCheckedBeforeItsTransform() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.route("/photo.png", TestResponse(headers: [("Content-Type", "image/png")], body: try encodedPicture(width: 64, height: 48)))
        let fixture = ManagerFixture()
        let ran = Runs()
        var context = WebImageContext()
        context.transformer = PlanningTransformer(planned: PixelSize(width: 50_000, height: 50_000), ran: ran)
        await #expect(throws: WebImageError.self) { _ = try await fixture.manager.loadImage(url: server.url("/photo.png"), context: context) }
        #expect(ran.count.load(ordering: .relaxed) == 0)
    }
}
