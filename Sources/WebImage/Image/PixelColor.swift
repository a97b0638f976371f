/// An 8-bit-per-channel colour with straight alpha, as pixels store it.
public struct PixelColor: Sendable, Hashable {
    /// Red, 0–255.
    public var red: UInt8
    /// Green, 0–255.
    public var green: UInt8
    /// Blue, 0–255.
    public var blue: UInt8
    /// Opacity, 0 (transparent) to 255 (opaque); default 255.
    public var alpha: UInt8

    /// Creates a colour from its channels; `alpha` defaults to opaque.
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// Opaque white.
    public static let white = PixelColor(red: 255, green: 255, blue: 255)
    /// Opaque black.
    public static let black = PixelColor(red: 0, green: 0, blue: 0)
    /// Fully transparent black.
    public static let clear = PixelColor(red: 0, green: 0, blue: 0, alpha: 0)
}
