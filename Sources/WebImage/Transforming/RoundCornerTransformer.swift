import Foundation

/// Rounds an image's corners, optionally inside a border (SDWebImage's `SDImageRoundCornerTransformer`).
///
/// Edges are anti-aliased: a pixel the curve crosses gets the share of it that lies inside. The
/// result always has alpha (gray becomes gray with alpha, colour becomes RGBA; a coloured border on a
/// gray image gives RGBA). A radius of half the short side of a square image makes a circle.
public struct RoundCornerTransformer: ImageTransformer, Hashable {
    /// Which corners are rounded.
    public struct Corners: OptionSet, Sendable, Hashable {
        /// The bits: 1 top left, 2 top right, 4 bottom left, 8 bottom right (UIKit's `UIRectCorner`).
        public let rawValue: Int
        /// Creates the set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// The top-left corner.
        public static let topLeft = Corners(rawValue: 1)
        /// The top-right corner.
        public static let topRight = Corners(rawValue: 2)
        /// The bottom-left corner.
        public static let bottomLeft = Corners(rawValue: 4)
        /// The bottom-right corner.
        public static let bottomRight = Corners(rawValue: 8)
        /// All four corners.
        public static let all: Corners = [.topLeft, .topRight, .bottomLeft, .bottomRight]
    }

    /// The corner radius in pixels (at most half the image's short side is used).
    public let radius: Double
    /// The corners that are rounded.
    public let corners: Corners
    /// The width in pixels of the border drawn inside the edge; 0 for none.
    public let borderWidth: Double
    /// The border's colour (its alpha is kept: a translucent border shows the image through).
    public let borderColor: PixelColor

    /// Creates a transformer that rounds corners.
    /// - Parameters:
    ///   - radius: the radius in pixels, at least 0; larger than half the short side acts as half of it.
    ///   - corners: which corners to round; default ``Corners/all``.
    ///   - borderWidth: a border drawn inside the rounded edge, in pixels; default 0 (none).
    ///   - borderColor: the border's colour; default opaque black.
    /// ``transform(_:forKey:)`` throws for a negative or non-finite radius or width.
    public init(radius: Double, corners: Corners = .all, borderWidth: Double = 0, borderColor: PixelColor = .black) {
        self.radius = radius
        self.corners = corners
        self.borderWidth = borderWidth
        self.borderColor = borderColor
    }

    /// `RoundCornerTransformer(RADIUS,CORNERS,BORDER,#RRGGBBAA)`, such as
    /// `RoundCornerTransformer(16.000000,15,0.000000,#000000FF)`.
    public var key: String {
        "RoundCornerTransformer(\(TransformSupport.keyNumber(radius)),\(corners.rawValue),"
            + "\(TransformSupport.keyNumber(borderWidth)),\(TransformSupport.hex(borderColor)))"
    }

    /// The same size as the source: the pixels change, not the canvas.
    public func plannedSizes(for source: PixelSize) -> [PixelSize] { [source] }

    /// Returns the image with rounded corners (every frame of an animated one).
    /// - Throws: ``ImageTransformError/invalidParameter(_:)`` for a negative or non-finite radius or
    ///   border width; ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        let image = try TransformSupport.eightBit(image)   // 8-bit samples only
        guard radius.isFinite, radius >= 0, borderWidth.isFinite, borderWidth >= 0 else {
            throw ImageTransformError.invalidParameter("round corners need a radius and border width of 0 or more, not \(radius) and \(borderWidth)")
        }
        let grayBorder = borderWidth == 0 || (borderColor.red == borderColor.green && borderColor.green == borderColor.blue)
        return try image.transformingFrames { frame in
            let format: PixelFormat = frame.pixelFormat.isColor || !grayBorder ? .rgba8 : .grayAlpha8
            let shape = Shape(width: Double(frame.width), height: Double(frame.height),
                              radius: min(radius, Double(min(frame.width, frame.height)) / 2), corners: corners)
            return try frame.mappingRGBARows(to: format) { pixels, y in
                for x in 0..<frame.width {
                    let distance = shape.distanceInside(x: Double(x) + 0.5, y: Double(y) + 0.5)
                    if distance >= borderWidth + 0.5 { continue }
                    shade(pixels.baseAddress! + 4 * x, distance: distance)
                }
            }
        }
    }

    /// Clips the RGBA pixel at `pixel` to the shape and lays the border over it, given how far its
    /// centre lies inside the edge.
    private func shade(_ pixel: UnsafeMutablePointer<UInt8>, distance: Double) {
        let outer = min(max(distance + 0.5, 0), 1)
        let imageAlpha = Double(pixel[3]) / 255 * outer
        guard borderWidth > 0 else {
            pixel[3] = TransformSupport.byte(Float(imageAlpha * 255))
            return
        }
        let inner = min(max(distance - borderWidth + 0.5, 0), 1)
        let border = Double(borderColor.alpha) / 255 * (outer - inner)
        let alpha = border + imageAlpha * (1 - border)
        for c in 0..<3 {
            let channel = c == 0 ? borderColor.red : (c == 1 ? borderColor.green : borderColor.blue)
            let premultiplied = Double(channel) * border + Double(pixel[c]) * imageAlpha * (1 - border)
            pixel[c] = alpha > 0 ? TransformSupport.byte(Float(premultiplied / alpha)) : 0
        }
        pixel[3] = TransformSupport.byte(Float(alpha * 255))
    }

    /// A rectangle with some corners rounded, measured from inside.
    struct Shape {
        let width: Double
        let height: Double
        let radius: Double
        let corners: Corners

        /// How far the point lies inside the edge, in pixels (negative outside).
        func distanceInside(x: Double, y: Double) -> Double {
            if radius > 0 {
                let left = x < radius, right = x > width - radius
                let top = y < radius, bottom = y > height - radius
                let centre: (Double, Double)? = switch (left, right, top, bottom) {
                case (true, _, true, _) where corners.contains(.topLeft): (radius, radius)
                case (_, true, true, _) where corners.contains(.topRight): (width - radius, radius)
                case (true, _, _, true) where corners.contains(.bottomLeft): (radius, height - radius)
                case (_, true, _, true) where corners.contains(.bottomRight): (width - radius, height - radius)
                default: nil
                }
                if let (cx, cy) = centre {
                    return radius - ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot()
                }
            }
            return min(x, y, width - x, height - y)
        }
    }
}
