import Testing
@testable import WebImage

/// Helpers the transformer tests share: small images made in memory and pixel probes.
enum TransformerTestSupport {
    /// An image of `width` × `height` pixels of `format` whose channel values come from `value(x, y, c)`.
    static func image(
        _ width: Int, _ height: Int, _ format: PixelFormat = .rgb8,
        orientation: ImageOrientation = .up, value: (Int, Int, Int) -> UInt8
    ) throws -> Image {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * format.bytesPerPixel)
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<format.bytesPerPixel { pixels.append(value(x, y, c)) }
            }
        }
        return try Image(width: width, height: height, pixelFormat: format, pixels: pixels, orientation: orientation)
    }

    /// An image whose every pixel is `pixel` (one value per channel of `format`).
    static func constant(_ width: Int, _ height: Int, _ format: PixelFormat, _ pixel: [UInt8]) throws -> Image {
        precondition(pixel.count == format.bytesPerPixel)
        return try image(width, height, format) { _, _, c in pixel[c] }
    }

    /// An image in which every pixel differs from the others (colour images up to 256 × 256 pixels,
    /// gray ones up to 256 pixels): in colour, channel 0 is x and channel 1 is y; in gray, the value
    /// is the pixel's index; alpha, if any, is `255 − (x + y) % 200`.
    static func distinct(_ width: Int, _ height: Int, _ format: PixelFormat = .rgb8) throws -> Image {
        try image(width, height, format) { x, y, c in
            if format.hasAlpha && c == format.bytesPerPixel - 1 { return UInt8(255 - (x + y) % 200) }
            if !format.isColor { return UInt8((y * width + x) % 256) }
            return [UInt8(x), UInt8(y), UInt8((x * 7 + y * 13) % 256)][c]
        }
    }

    /// Random pixels from a fixed seed.
    static func random(_ width: Int, _ height: Int, _ format: PixelFormat, seed: UInt64,
                       alphaRange: ClosedRange<UInt8> = 0...255) -> (Int, Int, Int) -> UInt8 {
        var generator = SplitMix(seed: seed)
        var values: [UInt8] = []
        for _ in 0..<(width * height) {
            for c in 0..<format.bytesPerPixel {
                let isAlpha = format.hasAlpha && c == format.bytesPerPixel - 1
                values.append(isAlpha ? UInt8.random(in: alphaRange, using: &generator) : UInt8.random(in: 0...255, using: &generator))
            }
        }
        let channels = format.bytesPerPixel
        return { x, y, c in values[(y * width + x) * channels + c] }
    }

    /// The channels of pixel (`x`, `y`).
    static func pixel(_ image: Image, _ x: Int, _ y: Int) -> [UInt8] {
        let channels = image.pixelFormat.bytesPerPixel
        let bytes = image.pixels
        let start = bytes.startIndex + y * image.bytesPerRow + x * channels
        return Array(bytes[start..<(start + channels)])
    }

    /// The alpha of pixel (`x`, `y`) (255 for formats without alpha).
    static func alpha(_ image: Image, _ x: Int, _ y: Int) -> UInt8 {
        image.pixelFormat.hasAlpha ? pixel(image, x, y).last! : 255
    }

    /// The pixels of `image`, tightly packed (rows without padding).
    static func packed(_ image: Image) -> [UInt8] {
        let rowBytes = image.width * image.pixelFormat.bytesPerPixel
        let bytes = Array(image.pixels)
        return (0..<image.height).flatMap { y in bytes[(y * image.bytesPerRow)..<(y * image.bytesPerRow + rowBytes)] }
    }

    /// The largest difference between two byte arrays of the same length (`Int.max` when the lengths differ).
    static func largestDifference(_ actual: [UInt8], _ expected: [UInt8]) -> Int {
        guard actual.count == expected.count else { return .max }
        return zip(actual, expected).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    /// The ``ImageTransformError`` that `body` throws, or `nil` when it throws nothing or another error.
    static func transformError<T>(_ body: () throws -> T) -> ImageTransformError? {
        do {
            _ = try body()
            return nil
        } catch let error as ImageTransformError {
            return error
        } catch {
            return nil
        }
    }

    /// Builds an animated image from `frames` (all the same size and format) in memory.
    static func animated(_ frames: [(image: Image, duration: Duration)]) throws -> Image {
        let first = frames[0].image
        let byteCount = first.bytesPerRow * first.height
        let storage = try PixelStorage(byteCount: byteCount)
        first.withUnsafePixels { storage.bytes.copyMemory(from: $0.baseAddress!, byteCount: byteCount) }
        return Image(storage: storage, width: first.width, height: first.height, pixelFormat: first.pixelFormat,
                     bytesPerRow: first.bytesPerRow,
                     laterFrames: frames.dropFirst().map { ImageFrame(image: $0.image, duration: $0.duration) },
                     firstFrameDuration: frames[0].duration)
    }
}

extension ImageTransformError {
    /// The case's name, for comparing errors without their messages.
    var caseName: String {
        switch self {
        case .invalidParameter: "invalidParameter"
        case .emptyResult: "emptyResult"
        case .insufficientMemory: "insufficientMemory"
        case .invalidSpecification: "invalidSpecification"
        case .other: "other"
        }
    }
}
