import Foundation
import Testing
@testable import WebImage
import WebImageAVIF
import WebImageWebP

/// ``DecodeOptions/maxDecodedFrames`` (imgproxy's `max_animation_frames`): every animated coder
/// keeps the first N frames exactly as a full decode makes them, durations and loop count included,
/// and the budget counts only those.
@Suite struct KeptFramesTests {
    static let animations = ["gif/valid/pillow/chi.gif", "png/valid/wuffs/muybridge.apng", "png/valid/pillow/apng/dispose_op_previous.png",
                             "webp/valid/pillow/iss634.webp", "avif/valid/pillow/avif/star.avifs"]
    static let coders = CoderRegistry(coders: [PNGCoder(), GIFCoder(), WebPCoder(), AVIFCoder()])

    @Test(arguments: animations)
    func theFirstFramesAreKeptAsAFullDecodeMakesThem(path: String) throws {
        let data = try Data(contentsOf: Corpus.root.appendingPathComponent(path))
        let full = try Self.coders.decode(data)
        #expect(full.frames.count > 2, "\(path) is an animation of more than two frames")
        var options = DecodeOptions()
        options.maxDecodedFrames = 2
        let kept = try Self.coders.decode(data, options: options)
        #expect(kept.frames.count == 2 && kept.loopCount == full.loopCount, "\(path)")
        for index in 0..<2 {
            #expect(kept.frames[index].image.pixels == full.frames[index].image.pixels, "\(path) frame \(index)")
            #expect(kept.frames[index].duration == full.frames[index].duration, "\(path) frame \(index)")
        }
        options.maxDecodedFrames = 1
        #expect(try !Self.coders.decode(data, options: options).isAnimated, "\(path): one frame is a still")
        // The budget counts the frames kept: two frames fit where the whole animation does not.
        var tight = DecodeOptions()
        tight.maxFrameCount = 2
        #expect(throws: ImageCodingError.self, "\(path): the whole animation is over the budget") { _ = try Self.coders.decode(data, options: tight) }
        tight.maxDecodedFrames = 2
        #expect(try Self.coders.decode(data, options: tight).frames.count == 2, "\(path)")
        #expect(!tight.decodesFullImage, "a decode of some frames is a derived image")
    }
}
