import Foundation
import Testing
@testable import WebImage

/// Smart gravity (`g:sm`) on images whose right answer is known: a subject placed off-centre on a
/// plain or a textured background must be inside the crop, wherever it is.
@Suite struct SmartCropTests {
    /// A `size` image: a background (flat grey, or grey with faint noise when `textured`) and a
    /// saturated, detailed `subject` square (red and yellow stripes) at `at`.
    static func scene(_ size: PixelSize, subject: Int, at origin: (x: Int, y: Int), textured: Bool) throws -> Image {
        var random = SplitMix(seed: 7)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 3)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let index = (y * size.width + x) * 3
                let inside = x >= origin.x && x < origin.x + subject && y >= origin.y && y < origin.y + subject
                if inside {
                    let stripe = ((x - origin.x) / 3 + (y - origin.y) / 3) % 2 == 0
                    (pixels[index], pixels[index + 1], pixels[index + 2]) = stripe ? (230, 30, 20) : (250, 210, 20)
                } else {
                    let noise = textured ? UInt8(truncatingIfNeeded: random.next() % 24) : 0
                    (pixels[index], pixels[index + 1], pixels[index + 2]) = (110 + noise, 112 + noise, 108 + noise)
                }
            }
        }
        return try Image(width: size.width, height: size.height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// How many pixels of `image` are the subject's red or yellow.
    static func subjectPixels(_ image: Image) -> Int {
        let rgba = [UInt8]((try? image.converted(to: .rgba8))?.pixels ?? Data())
        return stride(from: 0, to: rgba.count, by: 4).filter { rgba[$0] > 200 && rgba[$0 + 2] < 80 }.count
    }

    @Test(arguments: [false, true], [(10, 60), (300, 20), (170, 130)])
    func theSubjectIsInsideTheCrop(textured: Bool, position: (Int, Int)) throws {
        let source = try Self.scene(PixelSize(width: 400, height: 200), subject: 40, at: position, textured: textured)
        var options = ProcessingOptions()
        (options.resizingType, options.width, options.height, options.gravity) = (.fill, 100, 100, Gravity(.smart))
        let cropped = try ProcessingTransformer(options: options).transform(source, forKey: "")
        #expect(cropped.size == PixelSize(width: 100, height: 100))
        // Scaled by 0.5 the subject is 20 x 20 = 400 pixels; a centred crop would miss it at x 10 and 300.
        #expect(Self.subjectPixels(cropped) >= 380, "the subject at \(position) (textured: \(textured))")
        options.gravity = .center
        let centred = try ProcessingTransformer(options: options).transform(source, forKey: "")
        if position.0 != 170 { #expect(Self.subjectPixels(centred) == 0, "a centred crop misses it: the case proves something") }
    }

    @Test func aSmartCropBeforeTheResizeFindsTheSubjectToo() throws {
        let source = try Self.scene(PixelSize(width: 600, height: 300), subject: 50, at: (520, 220), textured: true)
        var options = ProcessingOptions()
        options.crop = ProcessingOptions.Crop(width: 150, height: 150, gravity: Gravity(.smart))
        let cropped = try ProcessingTransformer(options: options).transform(source, forKey: "")
        #expect(cropped.size == PixelSize(width: 150, height: 150))
        #expect(Self.subjectPixels(cropped) == 2500)
    }

    @Test func aUniformImageIsCroppedInTheCentre() throws {
        let flat = try Image(width: 300, height: 100, pixelFormat: .rgb8, pixels: [UInt8](repeating: 128, count: 300 * 100 * 3))
        #expect(try SmartCrop.origin(of: PixelSize(width: 100, height: 100), in: flat) == (100, 0))
    }

    @Test func smartFillKeepsEveryFrameOfAnAnimationAligned() throws {
        let first = try Self.scene(PixelSize(width: 200, height: 100), subject: 30, at: (150, 30), textured: false)
        let second = try Self.scene(PixelSize(width: 200, height: 100), subject: 30, at: (150, 30), textured: false)
        let animation = first.replacingFrames(first: first, later: [ImageFrame(image: second, duration: .milliseconds(100),
                                                                               storedDuration: .milliseconds(100))])
        var options = ProcessingOptions()
        (options.resizingType, options.width, options.height, options.gravity) = (.fill, 50, 50, Gravity(.smart))
        let result = try ProcessingTransformer(options: options).transform(animation, forKey: "")
        #expect(result.frames.count == 2)
        #expect(result.frames.map { Self.subjectPixels($0.image) } == [Self.subjectPixels(result), Self.subjectPixels(result)])
        #expect(Self.subjectPixels(result) > 200)
    }
}
