/// A rectangle of whole pixels: its top-left corner and its size, with y growing downwards as in
/// an ``Image``'s rows.
public struct PixelRect: Sendable, Hashable, CustomStringConvertible {
    /// The column of the left edge.
    public var x: Int
    /// The row of the top edge.
    public var y: Int
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int

    /// Creates the rectangle whose top-left pixel is (`x`, `y`) and whose size is `width` × `height`.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The size of the rectangle.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// Whether the rectangle holds no pixel (a width or height of zero or less).
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The pixels both rectangles hold; an empty rectangle (size zero) when they do not overlap.
    public func intersection(_ other: PixelRect) -> PixelRect {
        let left = max(x, other.x)
        let top = max(y, other.y)
        let right = min(Self.saturatingSum(x, width), Self.saturatingSum(other.x, other.width))
        let bottom = min(Self.saturatingSum(y, height), Self.saturatingSum(other.y, other.height))
        guard right > left, bottom > top else { return PixelRect(x: left, y: top, width: 0, height: 0) }
        return PixelRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    /// `a + b`, held at `Int.max` or `Int.min` instead of wrapping.
    private static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// `X,Y,WIDTHxHEIGHT`, such as `10,20,100x50`.
    public var description: String { "\(x),\(y),\(width)x\(height)" }
}
