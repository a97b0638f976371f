/// How a coder encodes an ``Image``.
public struct EncodeOptions: Sendable, Hashable {
    /// Lossy quality from 0 (smallest) to 1 (best), as SDWebImage's `compressionQuality`; default 0.9.
    /// JPEG maps it to libjpeg quality 1–100. Lossless formats ignore it.
    public var compressionQuality: Double
    /// The colour that transparent pixels are composed over when the target format has no alpha
    /// (JPEG); its own alpha is ignored; default ``PixelColor/white``.
    public var backgroundColor: PixelColor
    /// Scale the image down (keeping its aspect ratio) so that neither side exceeds this many pixels
    /// before encoding; default `nil` (encode at full size).
    public var maxPixelSize: Int?
    /// PNG zlib compression level 0–9; default 3. On photographs level 3 writes files within about 6 %
    /// of level 6 (zlib's own default) in a third of the time; 0 stores without compression.
    public var pngCompressionLevel: Int

    /// Creates encode options; every parameter defaults to the property's documented default.
    public init(
        compressionQuality: Double = 0.9, backgroundColor: PixelColor = .white,
        maxPixelSize: Int? = nil, pngCompressionLevel: Int = 3
    ) {
        self.compressionQuality = compressionQuality
        self.backgroundColor = backgroundColor
        self.maxPixelSize = maxPixelSize
        self.pngCompressionLevel = pngCompressionLevel
    }
}
