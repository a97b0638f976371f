import Foundation

/// What an image is, without its pixels: what a page needs to reserve the right box and paint a
/// placeholder before the image arrives (``WebImageManager/loadImageInfo(url:options:context:)``).
///
/// Sizes are upright (EXIF orientation and container rotations applied). Placeholders and colours
/// are computed from the first frame scaled to fit 100×100 (``Image/placeholderSource(background:)``).
public struct ImageInfo: Sendable, Hashable, Codable {
    /// The image's size as displayed, in pixels.
    public var pixelSize: PixelSize
    /// The source's format, sniffed from its bytes.
    public var format: ImageFormat
    /// Frames: 1 for a still image.
    public var frameCount: Int
    /// An animation's total duration (one play); `nil` for a still image.
    public var duration: Duration?
    /// How many times an animation plays (0: forever); 0 for a still image.
    public var loopCount: Int
    /// The source's size in bytes, as downloaded (or stored).
    public var byteCount: Int
    /// Whether the pixels have an alpha channel.
    public var hasAlpha: Bool
    /// The EXIF orientation the source declares (already applied to ``pixelSize``).
    public var orientation: ImageOrientation
    /// The name (`desc` tag) of the embedded ICC colour profile, such as `"Display P3"`; `nil` when
    /// there is none (the pixels are sRGB) or it has no readable name.
    public var colorProfileName: String?
    /// The BlurHash (4×3 components unless asked otherwise), transparent pixels composited over white.
    public var blurHash: String
    /// The ThumbHash's bytes (``ThumbHash/init(bytes:)`` reads them; ``thumbHashBase64`` for JSON).
    public var thumbHash: [UInt8]
    /// The mean colour (alpha-weighted; see ``Image/averageColor()``).
    public var averageColor: PixelColor
    /// The colour most of the image is (see ``Image/dominantColor()``).
    public var dominantColor: PixelColor
    /// Where these facts came from: ``ImageCacheType/memory`` or ``ImageCacheType/disk`` when
    /// stored before (nothing was decoded), ``ImageCacheType/none`` when computed now. Not stored.
    public var cacheType: ImageCacheType = .none

    /// The ThumbHash in standard base64 with padding.
    public var thumbHashBase64: String { Data(thumbHash).base64EncodedString() }

    /// Creates facts (the manager makes them; tests and custom caches may too).
    public init(pixelSize: PixelSize, format: ImageFormat, frameCount: Int, duration: Duration?, loopCount: Int, byteCount: Int,
                hasAlpha: Bool, orientation: ImageOrientation, colorProfileName: String?, blurHash: String, thumbHash: [UInt8],
                averageColor: PixelColor, dominantColor: PixelColor) {
        self.pixelSize = pixelSize
        self.format = format
        self.frameCount = frameCount
        self.duration = duration
        self.loopCount = loopCount
        self.byteCount = byteCount
        self.hasAlpha = hasAlpha
        self.orientation = orientation
        self.colorProfileName = colorProfileName
        self.blurHash = blurHash
        self.thumbHash = thumbHash
        self.averageColor = averageColor
        self.dominantColor = dominantColor
    }

    /// The facts of `source` (the original's bytes) and `image` (its small decode: all frames,
    /// upright, fitting 100×100).
    init(source: Data, image: Image, blurHashComponents: (x: Int, y: Int) = (4, 3)) throws {
        let header = ImageHeader(data: source)
        let pixels = try PlaceholderPixels(image: image)
        let colors = ImageColors(pixels: pixels)
        let frames = image.frames
        let sniffed = ImageFormat(sniffing: source)
        self.init(pixelSize: header.uprightSize ?? image.size, format: sniffed == .unknown ? image.format : sniffed,
                  frameCount: frames.count, duration: image.isAnimated ? frames.reduce(.zero) { $0 + $1.duration } : nil,
                  loopCount: image.isAnimated ? image.loopCount : 0, byteCount: source.count, hasAlpha: image.pixelFormat.hasAlpha,
                  orientation: header.orientation, colorProfileName: ICCProfileReader.profile(in: source).flatMap(ICCProfileDescription.name),
                  blurHash: try BlurHash(pixels: pixels, xComponents: blurHashComponents.x, yComponents: blurHashComponents.y).string, thumbHash: ThumbHash(pixels: pixels).bytes,
                  averageColor: colors.average, dominantColor: colors.dominant)
    }

    private enum CodingKeys: String, CodingKey {
        case pixelSize, format, frameCount, durationMilliseconds, loopCount, byteCount, hasAlpha, orientation, colorProfileName,
             blurHash, thumbHash, averageColor, dominantColor
    }

    /// Reads facts stored by ``encode(to:)`` (the cache's JSON form).
    /// - Throws: `DecodingError` when a field is missing or malformed.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        func color(_ key: CodingKeys) throws -> PixelColor {
            let channels = try values.decode([UInt8].self, forKey: key)
            guard channels.count == 4 else { throw DecodingError.dataCorruptedError(forKey: key, in: values, debugDescription: "RGBA") }
            return PixelColor(red: channels[0], green: channels[1], blue: channels[2], alpha: channels[3])
        }
        pixelSize = try values.decode(PixelSize.self, forKey: .pixelSize)
        format = ImageFormat(rawValue: try values.decode(String.self, forKey: .format))
        frameCount = try values.decode(Int.self, forKey: .frameCount)
        duration = try values.decodeIfPresent(Int.self, forKey: .durationMilliseconds).map { .milliseconds($0) }
        loopCount = try values.decode(Int.self, forKey: .loopCount)
        byteCount = try values.decode(Int.self, forKey: .byteCount)
        hasAlpha = try values.decode(Bool.self, forKey: .hasAlpha)
        orientation = ImageOrientation(exifValue: try values.decode(Int.self, forKey: .orientation))
        colorProfileName = try values.decodeIfPresent(String.self, forKey: .colorProfileName)
        blurHash = try values.decode(String.self, forKey: .blurHash)
        thumbHash = try values.decode([UInt8].self, forKey: .thumbHash)
        averageColor = try color(.averageColor)
        dominantColor = try color(.dominantColor)
    }

    /// Writes the facts for the cache (every field but ``cacheType``; the duration in milliseconds).
    /// - Throws: what the encoder throws.
    public func encode(to encoder: any Encoder) throws {
        var values = encoder.container(keyedBy: CodingKeys.self)
        try values.encode(pixelSize, forKey: .pixelSize)
        try values.encode(format.rawValue, forKey: .format)
        try values.encode(frameCount, forKey: .frameCount)
        try values.encodeIfPresent(duration.map { Int($0 / .milliseconds(1)) }, forKey: .durationMilliseconds)
        try values.encode(loopCount, forKey: .loopCount)
        try values.encode(byteCount, forKey: .byteCount)
        try values.encode(hasAlpha, forKey: .hasAlpha)
        try values.encode(orientation.rawValue, forKey: .orientation)
        try values.encodeIfPresent(colorProfileName, forKey: .colorProfileName)
        try values.encode(blurHash, forKey: .blurHash)
        try values.encode(thumbHash, forKey: .thumbHash)
        for (color, key) in [(averageColor, CodingKeys.averageColor), (dominantColor, .dominantColor)] {
            try values.encode([color.red, color.green, color.blue, color.alpha], forKey: key)
        }
    }
}
