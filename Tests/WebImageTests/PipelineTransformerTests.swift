import Foundation
import Testing
@testable import WebImage

/// Counts how often it runs and returns the image unchanged.
private struct CountingTransformer: ImageTransformer {
    /// `@unchecked Sendable` is safe: `value` is only read or written while `lock` is held.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() { lock.withLock { value += 1 } }
        var count: Int { lock.withLock { value } }
    }

    let counter = Counter()
    var key: String { "Counting" }

    func transform(_ image: Image, forKey key: String) throws -> Image {
        counter.increment()
        return image
    }
}

@Suite struct PipelineTransformerTests {
    typealias Support = TransformerTestSupport

    @Test func transformersApplyInOrder() throws {
        let image = try Support.distinct(100, 80, .rgb8)
        let resize = ResizingTransformer(size: PixelSize(width: 50, height: 40))
        let crop = CroppingTransformer(rect: PixelRect(x: 0, y: 0, width: 30, height: 30))
        let resizeThenCrop = try PipelineTransformer([resize, crop]).transform(image, forKey: "k")
        let cropThenResize = try PipelineTransformer([crop, resize]).transform(image, forKey: "k")
        #expect(resizeThenCrop.size == PixelSize(width: 30, height: 30))
        #expect(cropThenResize.size == PixelSize(width: 50, height: 40))
        // Each equals the two steps run by hand.
        let byHand = try crop.transform(try resize.transform(image, forKey: "k"), forKey: "k")
        #expect(Array(resizeThenCrop.pixels) == Array(byHand.pixels))
    }

    @Test func orderMattersForPixelsToo() throws {
        let image = try Support.distinct(6, 4, .rgb8)
        let flip = FlippingTransformer(horizontal: true)
        let turn = RotationTransformer(angle: 90)
        let flipThenTurn = try PipelineTransformer([flip, turn]).transform(image, forKey: "k")
        let turnThenFlip = try PipelineTransformer([turn, flip]).transform(image, forKey: "k")
        #expect(flipThenTurn.size == turnThenFlip.size)
        #expect(Array(flipThenTurn.pixels) != Array(turnThenFlip.pixels))
        let byHand = try turn.transform(try flip.transform(image, forKey: "k"), forKey: "k")
        #expect(Array(flipThenTurn.pixels) == Array(byHand.pixels))
    }

    @Test func theKeyJoinsTheKeysWithDashes() {
        let pipeline = PipelineTransformer([
            ResizingTransformer(size: PixelSize(width: 256, height: 256), scaleMode: .aspectFill),
            RoundCornerTransformer(radius: 16),
            FlippingTransformer(horizontal: true),
        ])
        #expect(pipeline.key == "ResizingTransformer(256x256,aspectFill)-RoundCornerTransformer(16.000000,15,0.000000,#000000FF)-FlippingTransformer(1,0)")
        #expect(PipelineTransformer([BlurTransformer(radius: 2)]).key == "BlurTransformer(2.000000)")
    }

    @Test func anEmptyPipelineHasAnEmptyKeyAndReturnsTheImage() throws {
        let image = try Support.distinct(5, 4, .rgba8)
        let pipeline = PipelineTransformer([])
        #expect(pipeline.key == "")
        #expect(pipeline.transformers.isEmpty)
        let result = try pipeline.transform(image, forKey: "k")
        #expect(result === image)
        #expect(Array(result.pixels) == Array(image.pixels))
    }

    @Test func theFirstErrorStopsThePipeline() throws {
        let image = try Support.distinct(10, 10, .rgb8)
        let before = CountingTransformer()
        let after = CountingTransformer()
        let pipeline = PipelineTransformer([
            before,
            CroppingTransformer(rect: PixelRect(x: 50, y: 50, width: 5, height: 5)),
            after,
            ResizingTransformer(size: PixelSize(width: 0, height: 3)),
        ])
        let error = Support.transformError { try pipeline.transform(image, forKey: "k") }
        #expect(error?.caseName == "emptyResult")
        #expect(before.counter.count == 1)
        #expect(after.counter.count == 0)
    }

    @Test func everyStepRunsOnce() throws {
        let image = try Support.distinct(10, 10, .rgb8)
        let counting = CountingTransformer()
        let result = try PipelineTransformer([counting, FlippingTransformer(vertical: true), counting]).transform(image, forKey: "k")
        #expect(counting.counter.count == 2)
        #expect(Support.pixel(result, 0, 0) == Support.pixel(image, 0, 9))
    }
}
