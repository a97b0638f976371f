/// What to do with an image's geometry and pixels, in imgproxy's vocabulary and with imgproxy's
/// semantics (its `processing/` pipeline and tests are the spec): resize by a resizing type, crop,
/// rotate and flip, extend, pad, blur, sharpen, pixelate, flatten onto a background.
///
/// A value, keyed once (``key``): ``ProcessingTransformer`` runs it on a decoded image and
/// `webimage serve` parses each URL's options into one. Every default is imgproxy's: fit, no size,
/// no enlarging, centre gravity, EXIF orientation applied, device pixel ratio 1.
public struct ProcessingOptions: Sendable, Hashable {
    /// How the image is fitted to ``width`` × ``height`` (imgproxy's `resizing_type`).
    public enum ResizingType: String, Sendable, Hashable, CaseIterable {
        /// `fit`: inside the box, aspect ratio kept (the default).
        case fit
        /// `fill`: cover the box, then crop the overflow by ``ProcessingOptions/gravity``.
        case fill
        /// `fill-down`: as fill, but an image smaller than the box is cropped to the box's aspect
        /// ratio instead of being enlarged.
        case fillDown = "fill-down"
        /// `force`: exactly the box, aspect ratio not kept (a 0 side keeps the source's).
        case force
        /// `auto`: fill when the source and the box are both landscape (or square) or both
        /// portrait, else fit.
        case auto
    }

    /// An extension of the canvas (imgproxy's `extend` and `extend_aspect_ratio`): where the image
    /// sits on it; the canvas is transparent, or ``ProcessingOptions/background``.
    public struct Extension: Sendable, Hashable {
        /// Where the image is placed; smart gravity is not allowed here. Default centre.
        public var gravity: Gravity
        /// Creates an extension placing the image by `gravity` (default centre).
        public init(gravity: Gravity = .center) { self.gravity = gravity }
    }

    /// A crop before the resize (imgproxy's `crop`): sizes of 1 or more are pixels, under 1 are
    /// fractions of the source, 0 is the whole side.
    public struct Crop: Sendable, Hashable {
        /// The width kept (pixels, or a fraction under 1; 0: all).
        public var width: Double
        /// The height kept (pixels, or a fraction under 1; 0: all).
        public var height: Double
        /// Where the crop is taken; `nil`: ``ProcessingOptions/gravity``.
        public var gravity: Gravity?
        /// Creates a crop; `gravity` defaults to the options' gravity.
        public init(width: Double, height: Double, gravity: Gravity? = nil) {
            self.width = width
            self.height = height
            self.gravity = gravity
        }
    }

    /// Padding in CSS pixels (scaled by the device pixel ratio), added after the resize.
    public struct Padding: Sendable, Hashable {
        /// Top, right, bottom and left, in pixels; default 0.
        public var top, right, bottom, left: Int
        /// Creates a padding; every side defaults to 0.
        public init(top: Int = 0, right: Int = 0, bottom: Int = 0, left: Int = 0) {
            (self.top, self.right, self.bottom, self.left) = (top, right, bottom, left)
        }
        /// Whether every side is 0.
        public var isZero: Bool { top == 0 && right == 0 && bottom == 0 && left == 0 }
    }

    /// A uniform border to remove before anything else (imgproxy's `trim`).
    public struct Trim: Sendable, Hashable {
        /// How far (0–255 per channel) a pixel may differ from the border colour and still be border.
        public var threshold: Double
        /// The border colour; `nil`: the top-left pixel's.
        public var color: PixelColor?
        /// Make the left and right margins removed equal (the smaller of the two).
        public var equalHorizontal: Bool
        /// Make the top and bottom margins removed equal.
        public var equalVertical: Bool
        /// Creates a trim; by default the colour is the top-left pixel's and the margins are independent.
        public init(threshold: Double, color: PixelColor? = nil, equalHorizontal: Bool = false, equalVertical: Bool = false) {
            self.threshold = threshold
            self.color = color
            self.equalHorizontal = equalHorizontal
            self.equalVertical = equalVertical
        }
    }

    /// Where and how the watermark image of ``ProcessingTransformer`` is laid over the result
    /// (imgproxy's `watermark`): it never changes the result's size.
    public struct Watermark: Sendable, Hashable {
        /// 0 (invisible) to 1 (as the watermark image is).
        public var opacity: Double
        /// Where it goes (a compass point with offsets; offsets of 1 or more are pixels times the
        /// device pixel ratio, under 1 fractions of the image). Smart and focus-point gravity are not used.
        public var position: Gravity
        /// Tile it over the whole image instead (imgproxy's `re`); ``position``'s offsets are then
        /// the spacing between tiles.
        public var replicates: Bool
        /// Fit the watermark into this fraction of the image's width and height (enlarging if
        /// needed); `nil`: its own size.
        public var scale: Double?
        /// Creates a watermark placement; by default opaque, centred, not tiled, at its own size.
        public init(opacity: Double = 1, position: Gravity = .center, replicates: Bool = false, scale: Double? = nil) {
            self.opacity = opacity
            self.position = position
            self.replicates = replicates
            self.scale = scale
        }
    }

    /// The resizing type; default ``ResizingType/fit``.
    public var resizingType: ResizingType = .fit
    /// The box's width in CSS pixels; 0 (default): from the height and the aspect ratio.
    public var width = 0
    /// The box's height in CSS pixels; 0 (default): from the width.
    public var height = 0
    /// The result is at least this wide (enlarging if needed, even without ``enlarge``); default 0.
    public var minWidth = 0
    /// The result is at least this high; default 0.
    public var minHeight = 0
    /// Multiplies the result's width; default 1.
    public var zoomX = 1.0
    /// Multiplies the result's height; default 1.
    public var zoomY = 1.0
    /// The device pixel ratio: multiplies the size, paddings and pixel offsets; default 1. Without
    /// ``enlarge`` it never makes the image larger than its source.
    public var devicePixelRatio = 1.0
    /// Whether the image may be made larger than its source; default `false`.
    public var enlarge = false
    /// Extend the canvas to the box when the image is smaller; default `nil` (no).
    public var extend: Extension?
    /// Extend the canvas to the box's aspect ratio; default `nil` (no).
    public var extendAspectRatio: Extension?
    /// Where ``ResizingType/fill`` crops (and a crop without its own gravity); default centre.
    public var gravity = Gravity.center
    /// A crop before the resize; default none.
    public var crop: Crop?
    /// Remove a uniform border first; default none.
    public var trim: Trim?
    /// Padding after the resize; default none.
    public var padding = Padding()
    /// Apply the source's EXIF orientation; default `true`.
    public var autoRotate = true
    /// Turn clockwise by 0, 90, 180 or 270 degrees after the orientation; default 0.
    public var rotation = 0
    /// Mirror left to right after rotating; default `false`.
    public var flipsHorizontally = false
    /// Mirror top to bottom after rotating; default `false`.
    public var flipsVertically = false
    /// Flatten transparency (and fill extended or padded areas) with this colour; `nil` (default):
    /// keep transparency where the output format has it.
    public var background: PixelColor?
    /// Gaussian blur sigma; 0 (default): none.
    public var blurSigma = 0.0
    /// Sharpening sigma; 0 (default): none.
    public var sharpenSigma = 0.0
    /// Pixelate into blocks of this many pixels; 1 or less (default): none.
    public var pixelateSize = 1
    /// Scale the whole result down so that neither side exceeds this; 0 (default): no limit.
    public var maxResultDimension = 0
    /// Lay the transformer's watermark image over the result; default `nil` (none).
    public var watermark: Watermark?

    /// Creates options that change nothing (every default above).
    public init() {}

    /// Whether running these options can change an image at all.
    public var isIdentity: Bool { self == ProcessingOptions() }

    /// A stable text naming every setting that differs from its default, in imgproxy's URL syntax
    /// (`rs:fill:300:200/g:sm/pd:10:0:0:0`): part of cache keys, so equal options give equal keys in
    /// every process, and the options part of a URL (``ProcessingURLBuilder``) that `webimage serve`
    /// and imgproxy read back as these options.
    public var key: String {
        var parts: [String] = []
        let n = ProcessingNumber.text
        if resizingType != .fit || width != 0 || height != 0 || enlarge {
            parts.append("rs:\(resizingType.rawValue):\(width):\(height)" + (enlarge ? ":1" : ""))
        }
        if minWidth != 0 { parts.append("mw:\(minWidth)") }
        if minHeight != 0 { parts.append("mh:\(minHeight)") }
        if zoomX != 1 || zoomY != 1 { parts.append("z:\(n(zoomX)):\(n(zoomY))") }
        if devicePixelRatio != 1 { parts.append("dpr:\(n(devicePixelRatio))") }
        if let extend { parts.append("ex:1:\(extend.gravity)") }
        if let extendAspectRatio { parts.append("exar:1:\(extendAspectRatio.gravity)") }
        if gravity != .center { parts.append("g:\(gravity)") }
        if let crop { parts.append("c:\(n(crop.width)):\(n(crop.height))" + (crop.gravity.map { ":\($0)" } ?? "")) }
        if let trim {
            parts.append("t:\(n(trim.threshold)):" + (trim.color.map(ProcessingOptions.hex) ?? "")
                         + ":\(trim.equalHorizontal ? 1 : 0):\(trim.equalVertical ? 1 : 0)")
        }
        if !padding.isZero { parts.append("pd:\(padding.top):\(padding.right):\(padding.bottom):\(padding.left)") }
        if !autoRotate { parts.append("ar:0") }
        if rotation != 0 { parts.append("rot:\(rotation)") }
        if flipsHorizontally || flipsVertically { parts.append("fl:\(flipsHorizontally ? 1 : 0):\(flipsVertically ? 1 : 0)") }
        if let background { parts.append("bg:" + Self.hex(background)) }
        if blurSigma > 0 { parts.append("bl:\(n(blurSigma))") }
        if sharpenSigma > 0 { parts.append("sh:\(n(sharpenSigma))") }
        if pixelateSize > 1 { parts.append("pix:\(pixelateSize)") }
        if maxResultDimension > 0 { parts.append("mrd:\(maxResultDimension)") }
        if let watermark {
            let kind = watermark.replicates ? "re" : watermark.position.kind.rawValue
            parts.append("wm:\(n(watermark.opacity)):\(kind):\(n(watermark.position.x)):\(n(watermark.position.y))"
                         + (watermark.scale.map { ":\(n($0))" } ?? ""))
        }
        return parts.joined(separator: "/")
    }

    /// `rrggbb`, as imgproxy writes colours.
    static func hex(_ color: PixelColor) -> String {
        String(format: "%02x%02x%02x", color.red, color.green, color.blue)
    }
}
