import WebImage

/// What every URL's options start from on one server: imgproxy's processing and security settings
/// (`IMGPROXY_QUALITY`, `IMGPROXY_FORMAT_QUALITY`, `IMGPROXY_MAX_SRC_RESOLUTION`, …), which a URL's
/// own options then overwrite (``ImageServerConfig/processingDefaults``). Every default is
/// imgproxy's, except where a property says otherwise.
public struct ProcessingDefaults: Sendable, Equatable {
    /// The quality of a lossy output when neither the URL nor ``formatQualities`` gives one (1–100);
    /// default 80 (`IMGPROXY_QUALITY`).
    public var quality: Int
    /// Per-format qualities, over ``quality`` (`IMGPROXY_FORMAT_QUALITY`); default the registry's
    /// ``WebImage/ImageFormatDescriptor/defaultQuality`` values: WebP 79, AVIF 63, JPEG XL 77, as imgproxy's.
    public var formatQualities: [ImageFormat: Int]
    /// The most pixels a source may have, frames counted (`IMGPROXY_MAX_SRC_RESOLUTION`); default
    /// `nil`: the manager's ``WebImage/ImageLimits/maxSourcePixels`` (imgproxy's is 50 megapixels;
    /// `webimage serve` sets it).
    public var maxSourcePixels: Int?
    /// The most frames an animation keeps (`IMGPROXY_MAX_ANIMATION_FRAMES`): its first N frames are
    /// decoded and the rest never are, as imgproxy; 1 reads the first frame only. Default `nil`:
    /// every frame, within the manager's limits (imgproxy's is 1; `webimage serve` sets it).
    public var maxAnimationFrames: Int?
    /// The most pixels one frame of an animation may have, checked frame by frame instead of the
    /// animation's total (`IMGPROXY_MAX_ANIMATION_FRAME_RESOLUTION`); default `nil`: not checked.
    public var maxAnimationFramePixels: Int?
    /// The longest side of a result: a larger one is scaled down to it (`IMGPROXY_MAX_RESULT_DIMENSION`);
    /// default 0: no limit.
    public var maxResultDimension: Int
    /// Whether colours are converted to sRGB and the profile dropped (`IMGPROXY_STRIP_COLOR_PROFILE`);
    /// default `true`.
    public var stripsColorProfile: Bool
    /// Whether the copyright of the source's metadata is kept when the rest is stripped
    /// (`IMGPROXY_KEEP_COPYRIGHT`); default `true`, as imgproxy.
    public var keepsCopyright: Bool
    /// Whether the EXIF orientation is applied (`IMGPROXY_AUTO_ROTATE`); default `true`.
    public var autoRotate: Bool
    /// Whether a source of more than 8 bits per channel (a 16-bit PNG or TIFF, a deep JPEG XL) keeps
    /// 16 bits in a PNG, TIFF or JPEG XL result (12 in AVIF) (`IMGPROXY_PRESERVE_HDR`; `preserve_hdr` per URL);
    /// default `false`: results are 8-bit, as imgproxy's.
    public var preservesHDR = false
    /// libavif's speed for AVIF, 0 (slowest, smallest) to 9 (`IMGPROXY_AVIF_SPEED`); default 9, as
    /// imgproxy: about twice as fast as libavif's own default (6) for files a few per cent larger.
    public var avifSpeed = 9
    /// libwebp's method for WebP, 1 (fastest) to 6 (`IMGPROXY_WEBP_EFFORT`); default 4, as imgproxy and `cwebp`.
    public var webpEffort = 4
    /// libjxl's effort for JPEG XL, 1 (fastest) to 9 (`IMGPROXY_JXL_EFFORT`); default 4, as imgproxy.
    public var jxlEffort = 4
    /// Whether JPEGs are written progressive (`IMGPROXY_JPEG_PROGRESSIVE`); default `false`.
    public var jpegProgressive = false
    /// The watermark's base opacity, which the `watermark` option's own multiplies
    /// (`IMGPROXY_WATERMARK_OPACITY`, 0–1); default 1.
    public var watermarkOpacity = 1.0
    /// Whether sources are always decoded at full size before resizing, never scaled down by the
    /// decoder (`IMGPROXY_DISABLE_SHRINK_ON_LOAD`); default `false`: shrink-on-load where the result
    /// stays the same.
    public var disablesShrinkOnLoad = false
    /// Source formats answered with the source's own bytes when the URL names no other format
    /// (`IMGPROXY_SKIP_PROCESSING_FORMATS`, as the URL's `skip_processing`); default none.
    public var skipProcessingFormats: Set<ImageFormat> = []
    /// The automatic quality of lossy answers (imgproxy Pro's `IMGPROXY_AUTOQUALITY_*`; `autoquality`
    /// per URL); default none: the fixed quality.
    public var autoQuality = AutoQualitySettings()

    /// ``avifSpeed`` as an ``WebImage/EncodeOptions/compressionEffort`` (libavif speed `10 − effort × 10`).
    var avifCompressionEffort: Double { Double(10 - min(max(avifSpeed, 0), 9)) / 10 }
    /// ``webpEffort`` as an ``WebImage/EncodeOptions/compressionEffort`` (libwebp method `effort × 6`).
    var webpCompressionEffort: Double { Double(min(max(webpEffort, 1), 6)) / 6 }
    /// ``jxlEffort`` as an ``WebImage/EncodeOptions/compressionEffort`` (libjxl effort `1 + effort × 8`).
    var jxlCompressionEffort: Double { Double(min(max(jxlEffort, 1), 9) - 1) / 8 }

    /// The output format a format name stands for (the registry's names and aliases), as URLs name
    /// them; `nil` for a name `coders` (default ``WebImage/CoderRegistry/shared``) cannot write or nobody knows.
    public static func outputFormat(named name: String, coders: CoderRegistry = .shared) -> ImageFormat? {
        guard let format = (try? ProcessingRequest.format(named: name, option: "format")) ?? nil, coders.canEncode(format) else { return nil }
        return format
    }

    /// The source formats a format name stands for in `skip_processing` (`heic` is HEIF's too); `nil`
    /// for a name the registry does not know.
    public static func sourceFormats(named name: String) -> Set<ImageFormat>? {
        try? ProcessingRequest.sourceFormats(named: name, option: "skip_processing")
    }

    /// Creates defaults; every parameter defaults to the property's documented default.
    public init(quality: Int = 80, formatQualities: [ImageFormat: Int] = ImageFormatRegistry.shared.defaultQualities(differingFrom: 80),
                maxSourcePixels: Int? = nil,
                maxAnimationFrames: Int? = nil, maxAnimationFramePixels: Int? = nil, maxResultDimension: Int = 0,
                stripsColorProfile: Bool = true, keepsCopyright: Bool = true, autoRotate: Bool = true) {
        self.quality = quality
        self.formatQualities = formatQualities
        self.maxSourcePixels = maxSourcePixels
        self.maxAnimationFrames = maxAnimationFrames
        self.maxAnimationFramePixels = maxAnimationFramePixels
        self.maxResultDimension = maxResultDimension
        self.stripsColorProfile = stripsColorProfile
        self.keepsCopyright = keepsCopyright
        self.autoRotate = autoRotate
    }
}
