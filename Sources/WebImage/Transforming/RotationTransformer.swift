import Foundation

/// Turns an image by an angle (SDWebImage's `SDImageRotationTransformer`).
///
/// Quarter turns (multiples of 90°) move pixels exactly, losing nothing, and keep the pixel format.
/// Other angles sample bilinearly (premultiplied), leave the uncovered corners transparent, and so
/// give an image with alpha.
public struct RotationTransformer: ImageTransformer, Hashable {
    /// The angle in degrees; positive turns clockwise as displayed.
    public let angle: Double
    /// Whether the canvas grows to hold the whole turned image (`true`) or keeps the original size,
    /// cutting off what falls outside (`false`).
    public let fitSize: Bool

    /// Creates a transformer that turns the image by `angle` degrees.
    /// - Parameters:
    ///   - angle: degrees, positive clockwise; must be finite (``transform(_:forKey:)`` throws otherwise).
    ///   - fitSize: grow the canvas to the turned image's bounding box, about `side × √2` at 45°;
    ///     default `true`. With `false` the size stays the same and the corners are cut off.
    public init(angle: Double, fitSize: Bool = true) {
        self.angle = angle
        self.fitSize = fitSize
    }

    /// `RotationTransformer(DEGREES,FIT)`, such as `RotationTransformer(45.000000,1)`.
    public var key: String { "RotationTransformer(\(TransformSupport.keyNumber(angle)),\(fitSize ? 1 : 0))" }

    /// Returns the turned image (every frame of an animated one).
    /// - Throws: ``ImageTransformError/invalidParameter(_:)`` for an infinite or NaN angle;
    ///   ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        let image = try TransformSupport.eightBit(image)   // 8-bit samples only
        guard angle.isFinite else { throw ImageTransformError.invalidParameter("a rotation needs a finite angle, not \(angle)") }
        let degrees = angle.truncatingRemainder(dividingBy: 360) + (angle < 0 ? 360 : 0)
        let quarters = (degrees / 90).rounded()
        let isQuarterTurn = abs(degrees / 90 - quarters) < 1e-9
        return try image.transformingFrames { frame in
            if isQuarterTurn {
                switch Int(quarters) % 4 {
                case 0: return frame
                case 2: return try frame.moved(as: .down)
                case 1 where fitSize || frame.width == frame.height: return try frame.moved(as: .right)
                case 3 where fitSize || frame.width == frame.height: return try frame.moved(as: .left)
                default: break
                }
            }
            return try rotated(frame, radians: degrees * .pi / 180)
        }
    }

    /// The canvas the turn makes (empty for an angle it refuses).
    public func plannedSizes(for source: PixelSize) -> [PixelSize] {
        angle.isFinite ? [outputSize(for: source)] : []
    }

    /// The size of the canvas for a `source`-sized image.
    func outputSize(for source: PixelSize) -> PixelSize {
        guard fitSize else { return source }
        let radians = angle * .pi / 180
        let cosine = abs(cos(radians)), sine = abs(sin(radians))
        let width = Double(source.width) * cosine + Double(source.height) * sine
        let height = Double(source.width) * sine + Double(source.height) * cosine
        return PixelSize(width: max(1, Int((width - 1e-6).rounded(.up))), height: max(1, Int((height - 1e-6).rounded(.up))))
    }

    /// Samples the turned image bilinearly; pixels outside the source count as transparent.
    private func rotated(_ frame: Image, radians: Double) throws -> Image {
        let format = frame.pixelFormat.withAlpha
        let source: Image
        do { source = try frame.converted(to: format) } catch { throw TransformSupport.transformError(error) }
        let size = outputSize(for: frame.size)
        let channels = format.bytesPerPixel
        let storage = try TransformSupport.allocate(width: size.width, height: size.height, format: format)
        let cosine = cos(radians), sine = sin(radians)
        let width = source.width, height = source.height, stride = source.bytesPerRow
        let target = storage.bytes.bindMemory(to: UInt8.self, capacity: size.width * size.height * channels)
        let sums = UnsafeMutablePointer<Float>.allocate(capacity: channels)
        defer { sums.deallocate() }
        source.withUnsafePixels { raw in
            let pixels = raw.bindMemory(to: UInt8.self)
            /// Adds the source pixel (x, y), premultiplied and weighted, unless it lies outside.
            func add(_ x: Int, _ y: Int, _ weight: Float) {
                guard weight > 0, x >= 0, y >= 0, x < width, y < height else { return }
                let base = y * stride + x * channels
                let alpha = Float(pixels[base + channels - 1]) * weight
                for c in 0..<(channels - 1) { sums[c] += Float(pixels[base + c]) * alpha }
                sums[channels - 1] += alpha
            }
            for oy in 0..<size.height {
                let dy = Double(oy) + 0.5 - Double(size.height) / 2
                for ox in 0..<size.width {
                    let dx = Double(ox) + 0.5 - Double(size.width) / 2
                    // The inverse turn maps the output pixel's centre back into the source.
                    let sx = cosine * dx + sine * dy + Double(width) / 2 - 0.5
                    let sy = -sine * dx + cosine * dy + Double(height) / 2 - 0.5
                    let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                    let fx = Float(sx - Double(x0)), fy = Float(sy - Double(y0))
                    sums.update(repeating: 0, count: channels)
                    add(x0, y0, (1 - fx) * (1 - fy))
                    add(x0 + 1, y0, fx * (1 - fy))
                    add(x0, y0 + 1, (1 - fx) * fy)
                    add(x0 + 1, y0 + 1, fx * fy)
                    let out = target + (oy * size.width + ox) * channels
                    let alpha = sums[channels - 1]
                    let inverse: Float = alpha > 0 ? 1 / alpha : 0
                    for c in 0..<(channels - 1) { out[c] = TransformSupport.byte(sums[c] * inverse) }
                    out[channels - 1] = TransformSupport.byte(alpha)
                }
            }
        }
        return frame.derived(storage: storage, width: size.width, height: size.height, pixelFormat: format)
    }
}
