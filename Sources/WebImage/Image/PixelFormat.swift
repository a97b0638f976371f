/// The layout of one pixel in an ``Image``'s memory: 8 or 16 bits per channel, channels interleaved.
///
/// Decoders choose the smallest format that holds the source without loss: a grayscale PNG decodes to
/// ``gray8``, a JPEG to ``rgb8``, a PNG with transparency to ``rgba8`` or ``grayAlpha8``. Sources of more
/// than 8 bits per channel decode to 8 bits unless ``DecodeOptions/keepsHighBitDepth`` asks for the
/// 16-bit layouts (``gray16`` … ``rgba16``: native-endian `UInt16` samples, 0…65535).
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
    /// One 16-bit luminance sample per pixel (libvips' `grey16`).
    case gray16
    /// 16-bit luminance and straight alpha samples.
    case grayAlpha16
    /// 16-bit red, green and blue samples (libvips' `rgb16`).
    case rgb16
    /// 16-bit red, green, blue and straight alpha samples.
    case rgba16

    /// The number of channels (1 to 4).
    public var channelCount: Int {
        switch self {
        case .gray8, .gray16: 1
        case .grayAlpha8, .grayAlpha16: 2
        case .rgb8, .rgb16: 3
        case .rgba8, .rgba16: 4
        }
    }

    /// The bits of one channel sample: 8, or 16 for the high-bit-depth layouts.
    public var bitsPerChannel: Int { isHighBitDepth ? 16 : 8 }

    /// Whether the samples are 16-bit (``gray16``, ``grayAlpha16``, ``rgb16``, ``rgba16``).
    public var isHighBitDepth: Bool {
        switch self {
        case .gray16, .grayAlpha16, .rgb16, .rgba16: true
        case .gray8, .grayAlpha8, .rgb8, .rgba8: false
        }
    }

    /// The number of bytes one pixel occupies (1 to 8).
    public var bytesPerPixel: Int { channelCount * bitsPerChannel / 8 }

    /// Whether the format carries an alpha channel (always its last sample).
    public var hasAlpha: Bool { channelCount == 2 || channelCount == 4 }

    /// Whether the format carries colour (red, green, blue) rather than luminance only.
    public var isColor: Bool { channelCount >= 3 }

    /// The same format with an alpha channel added (or itself if it has one), at the same depth.
    public var withAlpha: PixelFormat { Self.layout(color: isColor, alpha: true, highBitDepth: isHighBitDepth) }

    /// The 8-bit layout with the same channels (itself when 8-bit).
    public var eightBit: PixelFormat { Self.layout(color: isColor, alpha: hasAlpha, highBitDepth: false) }

    /// The 16-bit layout with the same channels (itself when 16-bit).
    public var sixteenBit: PixelFormat { Self.layout(color: isColor, alpha: hasAlpha, highBitDepth: true) }

    /// The layout with these channels and depth.
    public static func layout(color: Bool, alpha: Bool, highBitDepth: Bool) -> PixelFormat {
        switch (color, alpha, highBitDepth) {
        case (false, false, false): .gray8
        case (false, true, false): .grayAlpha8
        case (true, false, false): .rgb8
        case (true, true, false): .rgba8
        case (false, false, true): .gray16
        case (false, true, true): .grayAlpha16
        case (true, false, true): .rgb16
        case (true, true, true): .rgba16
        }
    }

    /// The name printed by tools, such as `rgba8`.
    public var description: String { rawValue }
}
