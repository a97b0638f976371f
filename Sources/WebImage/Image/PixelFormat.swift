/// The layout of one pixel in an ``Image``'s memory: 8 bits per channel, channels interleaved.
///
/// Decoders choose the smallest format that holds the source without loss: a grayscale PNG decodes to
/// ``gray8``, a JPEG to ``rgb8``, a PNG with transparency to ``rgba8`` or ``grayAlpha8``.
/// Alpha is always *straight* (not premultiplied).
public enum PixelFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// One luminance byte per pixel.
    case gray8
    /// A luminance byte followed by a straight alpha byte.
    case grayAlpha8
    /// Red, green and blue bytes.
    case rgb8
    /// Red, green, blue and straight alpha bytes.
    case rgba8

    /// The number of bytes one pixel occupies (1 to 4).
    public var bytesPerPixel: Int {
        switch self {
        case .gray8: 1
        case .grayAlpha8: 2
        case .rgb8: 3
        case .rgba8: 4
        }
    }

    /// Whether the format carries an alpha channel (always its last byte).
    public var hasAlpha: Bool { self == .grayAlpha8 || self == .rgba8 }

    /// Whether the format carries colour (red, green, blue) rather than luminance only.
    public var isColor: Bool { self == .rgb8 || self == .rgba8 }

    /// The same format with an alpha channel added (or itself if it has one).
    public var withAlpha: PixelFormat { isColor ? .rgba8 : .grayAlpha8 }

    /// The name printed by tools, such as `rgba8`.
    public var description: String { rawValue }
}
