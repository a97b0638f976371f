/// Where a crop, an extension canvas or a watermark is anchored (imgproxy's `gravity`): one of nine
/// compass points with offsets, the point of interest found in the image (``Kind/smart``), or a
/// focus point given as fractions of the image.
///
/// Offsets follow imgproxy: a value of 1 or more (in magnitude) is pixels, multiplied by the
/// request's device pixel ratio where the step runs after the resize; a value under 1 is a fraction
/// of the outer box. A positive x moves away from an east edge and towards the east from centre or
/// west; a positive y likewise from a south edge or towards the south.
public struct Gravity: Sendable, Hashable, CustomStringConvertible {
    /// The anchor.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `ce`: centred (the default).
        case center = "ce"
        /// `no`: the top edge, centred horizontally.
        case north = "no"
        /// `so`: the bottom edge.
        case south = "so"
        /// `ea`: the right edge.
        case east = "ea"
        /// `we`: the left edge.
        case west = "we"
        /// `noea`: the top-right corner.
        case northEast = "noea"
        /// `nowe`: the top-left corner.
        case northWest = "nowe"
        /// `soea`: the bottom-right corner.
        case southEast = "soea"
        /// `sowe`: the bottom-left corner.
        case southWest = "sowe"
        /// `sm`: the most interesting region (edges, saturated colour and skin tones), found on a small
        /// copy of the image. Takes no offsets.
        case smart = "sm"
        /// `fp`: a focus point at (x, y), fractions 0...1 of the width and height.
        case focusPoint = "fp"
    }

    /// The anchor; default ``Kind/center``.
    public var kind: Kind
    /// The horizontal offset (pixels when 1 or more in magnitude, else a fraction), or the focus
    /// point's x; default 0.
    public var x: Double
    /// The vertical offset, or the focus point's y; default 0.
    public var y: Double

    /// Creates a gravity; `x` and `y` default to 0.
    public init(_ kind: Kind = .center, x: Double = 0, y: Double = 0) {
        self.kind = kind
        self.x = x
        self.y = y
    }

    /// Centred, no offsets.
    public static let center = Gravity()

    /// imgproxy's spelling, as cache keys and URLs write it: `ce`, `no:10:5`, `fp:0.3:0.6`, `sm`.
    public var description: String {
        if kind == .smart || (kind != .focusPoint && x == 0 && y == 0) { return kind.rawValue }
        return "\(kind.rawValue):\(ProcessingNumber.text(x)):\(ProcessingNumber.text(y))"
    }

    /// The top-left corner of an `inner` box placed in an `outer` box by this gravity, imgproxy's
    /// way (centring rounds `(outer - inner + 1) / 2` half to even). `pixelScale` multiplies offsets
    /// given in pixels (the device pixel ratio after a resize, 1 before). Smart gravity places as
    /// centre (a smart crop finds its region first). Clamped inside `outer` unless `allowsOverflow`,
    /// when the box may hang off the edges by all but one pixel.
    func position(of inner: PixelSize, in outer: PixelSize, pixelScale: Double, allowsOverflow: Bool = false) -> (x: Int, y: Int) {
        var left: Int, top: Int
        if kind == .focusPoint {
            left = ProcessingNumber.scaleEven(outer.width, x) - inner.width / 2
            top = ProcessingNumber.scaleEven(outer.height, y) - inner.height / 2
        } else {
            let offsetX = abs(x) >= 1 ? Int(ProcessingNumber.roundEven(x * pixelScale)) : ProcessingNumber.scaleEven(outer.width, x)
            let offsetY = abs(y) >= 1 ? Int(ProcessingNumber.roundEven(y * pixelScale)) : ProcessingNumber.scaleEven(outer.height, y)
            left = Int(ProcessingNumber.roundEven(Double(outer.width - inner.width + 1) / 2)) + offsetX
            top = Int(ProcessingNumber.roundEven(Double(outer.height - inner.height + 1) / 2)) + offsetY
            switch kind {
            case .north, .northEast, .northWest: top = offsetY
            case .south, .southEast, .southWest: top = outer.height - inner.height - offsetY
            default: break
            }
            switch kind {
            case .east, .northEast, .southEast: left = outer.width - inner.width - offsetX
            case .west, .northWest, .southWest: left = offsetX
            default: break
            }
        }
        if allowsOverflow {
            left = min(max(left, -inner.width + 1), outer.width - 1)
            top = min(max(top, -inner.height + 1), outer.height - 1)
        } else {
            left = min(max(left, 0), max(outer.width - inner.width, 0))
            top = min(max(top, 0), max(outer.height - inner.height, 0))
        }
        return (left, top)
    }
}
