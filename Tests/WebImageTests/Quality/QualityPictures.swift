import Foundation
@testable import WebImage

/// Pictures of known character for the quality tests, made in code: a flat illustration, a busy
/// photograph-like picture, and the ramp the DSSIM reference values were computed on.
enum QualityPictures {
    /// Four flat rectangles and a diagonal band: an illustration (complexity about 1).
    static func flat(width: Int = 160, height: Int = 120) throws -> Image {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let quadrant = (x < width / 2 ? 0 : 1) + (y < height / 2 ? 0 : 2)
                var color: [UInt8] = [[230, 60, 40], [40, 120, 220], [250, 210, 60], [70, 170, 90]][quadrant]
                if abs(x - y) < 4 { color = [20, 20, 20] }
                pixels.replaceSubrange((y * width + x) * 3..<(y * width + x) * 3 + 3, with: color)
            }
        }
        return try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// A smooth gradient under strong pseudo-random grain: a film-grain photograph (complexity above 20).
    static func grainy(width: Int = 160, height: Int = 120, seed: UInt64 = 7) throws -> Image {
        var state = seed
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<3 {
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    let grain = Int(state >> 58) - 32   // −32...31
                    let base = (x * 255 / width + y * 128 / height + c * 40) % 256
                    pixels[(y * width + x) * 3 + c] = UInt8(min(max(base + grain, 0), 255))
                }
            }
        }
        return try Image(width: width, height: height, pixelFormat: .rgb8, pixels: pixels)
    }

    /// The 64×64 ramp of the DSSIM reference values: R = 4x, G = 4y, B = 2(x + y), each mod 256, opaque.
    static func ramp(_ change: (inout [UInt8]) -> Void = { _ in }) throws -> Image {
        var pixels = [UInt8](repeating: 255, count: 64 * 64 * 4)
        for y in 0..<64 {
            for x in 0..<64 {
                let i = (y * 64 + x) * 4
                pixels[i] = UInt8((x * 4) & 255)
                pixels[i + 1] = UInt8((y * 4) & 255)
                pixels[i + 2] = UInt8(((x + y) * 2) & 255)
            }
        }
        change(&pixels)
        return try Image(width: 64, height: 64, pixelFormat: .rgba8, pixels: pixels)
    }
}
