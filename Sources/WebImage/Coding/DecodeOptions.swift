/// How a coder decodes: at what size, with what limits, turned upright or not.
public struct DecodeOptions: Sendable, Hashable {
    /// The largest pixel count any image header may declare before the decoder refuses it, before
    /// allocating anything: 100 million pixels (400 MB as RGBA). Protects servers from decompression bombs.
    public static let defaultPixelCountLimit = 100_000_000

    /// The most frames an animation may have before its decode is refused: 1,000.
    public static let defaultMaxFrameCount = 1_000

    /// The most bytes all frames of an animation may take decoded (RGBA canvases) before its decode is
    /// refused: 256 MiB (a 380-frame 472×298 GIF takes 214 MB).
    public static let defaultMaxAnimationByteCount = 256 << 20

    /// SDWebImage's scale-down limit for ``maxPixelCount``: 60 MB of RGBA pixels (15,728,640 pixels).
    public static let scaleDownPixelCount = 60 * 1024 * 1024 / 4

    /// Decode a thumbnail that fits inside this size instead of the full image; default `nil` (full size).
    ///
    /// The result keeps the source's aspect ratio unless ``preservesAspectRatio`` is false, and is
    /// never larger than the source. JPEG uses DCT scaling, then an area-averaging resample to the
    /// exact size.
    public var thumbnailPixelSize: PixelSize?
    /// Whether a thumbnail keeps the source's aspect ratio (fits inside ``thumbnailPixelSize``);
    /// default `true`. When false, the thumbnail is exactly ``thumbnailPixelSize`` (but never upscaled).
    public var preservesAspectRatio: Bool
    /// Whether a thumbnail covers ``thumbnailPixelSize`` (both sides at least the box's, the aspect
    /// ratio kept) instead of fitting inside it; default `false`. What a crop to fill a box needs:
    /// the smallest image it can be cut from.
    public var thumbnailCoversBox = false
    /// Scale the image down (keeping its aspect ratio) until it has at most this many pixels;
    /// default `nil` (no limit). The `.scaleDownLargeImages` option sets ``scaleDownPixelCount``.
    public var maxPixelCount: Int?
    /// Refuse images whose header declares more pixels than this, with
    /// ``ImageCodingError/imageTooLarge(width:height:limit:)``; default ``defaultPixelCountLimit``.
    public var pixelCountLimit: Int
    /// Turn the pixels upright according to the file's EXIF orientation; default `true`.
    /// When `false`, the image keeps the stored pixels and reports the orientation in ``Image/orientation``.
    public var applyOrientation: Bool
    /// Decode only the first frame of an animated image (the rest is never decoded); default `false`.
    public var firstFrameOnly: Bool
    /// Decode at most the first this many frames of an animation: the rest are never decoded, and
    /// the result is an animation of those frames (imgproxy's `max_animation_frames`); default
    /// `nil`: every frame. The budget (``maxFrameCount``, ``maxAnimationByteCount``) counts the frames
    /// kept. ``firstFrameOnly`` wins.
    public var maxDecodedFrames: Int?
    /// Refuse animations with more frames than this, with ``ImageCodingError/animationTooLarge(frameCount:byteCount:frameLimit:byteLimit:)``,
    /// before allocating any frame; default ``defaultMaxFrameCount``. Counts the frames kept (``maxDecodedFrames``).
    public var maxFrameCount: Int
    /// Refuse animations whose frames would take more bytes than this decoded (frames × canvas × 4),
    /// before allocating any frame; default ``defaultMaxAnimationByteCount``. Counts the frames kept (``maxDecodedFrames``).
    public var maxAnimationByteCount: Int
    /// The ``Image/scale`` to give the result (pixels per point); default 1.
    public var scale: Double
    /// Whether pixels are converted from an embedded ICC profile (JPEG, PNG, WebP) to sRGB with Little
    /// CMS after decoding, as servers serve them; default `false` here, where decoded pixels are the
    /// file's own (the corpus checksums' definition). ``WebImageManager`` turns it on unless
    /// ``WebImageOptions/preserveColorProfile``. RGB profiles only: gray and CMYK profiles are left alone.
    public var convertsToSRGB: Bool
    /// The page of a multi-page file (TIFF) to decode, from 0; default 0, the first, as imgproxy reads
    /// them. Pages may differ in size, so they are never frames of one image: decode each on its own.
    /// Formats without pages ignore it; a page past the last throws
    /// ``ImageCodingError/pageNotFound(page:pageCount:)``.
    public var page = 0
    /// The side an icon (ICO, CUR) is wanted at: the entry nearest it (the smallest at least this large,
    /// else the largest); default `nil`: the largest entry (deepest, then first, on a tie). Other formats
    /// ignore it.
    public var iconSide: Int?
    /// Whether a still image of more than 8 bits per channel (a 16-bit PNG or TIFF, a JPEG XL or AVIF
    /// of 10 to 16 bits) decodes to the 16-bit layouts (``PixelFormat/rgb16`` and its kin) instead of being
    /// narrowed to 8 bits; default `false`. Only the 16-bit-aware steps keep them (resizing, cropping,
    /// orientation, ``ProcessingTransformer``'s geometry and watermark, the PNG, TIFF and JPEG XL
    /// encoders, and AVIF's, which writes them as 12-bit); every other transform and encoder is handed the image narrowed to 8 bits. Pixels
    /// kept at 16 bits are not converted to sRGB (``convertsToSRGB`` applies to 8-bit pixels), as
    /// imgproxy leaves 16-bit RGB alone. Animations always decode at 8 bits.
    public var keepsHighBitDepth = false

    /// Creates decode options; every parameter defaults to the property's documented default.
    public init(
        thumbnailPixelSize: PixelSize? = nil, preservesAspectRatio: Bool = true, maxPixelCount: Int? = nil,
        pixelCountLimit: Int = DecodeOptions.defaultPixelCountLimit, applyOrientation: Bool = true,
        firstFrameOnly: Bool = false, scale: Double = 1, maxFrameCount: Int = DecodeOptions.defaultMaxFrameCount,
        maxAnimationByteCount: Int = DecodeOptions.defaultMaxAnimationByteCount, convertsToSRGB: Bool = false
    ) {
        self.thumbnailPixelSize = thumbnailPixelSize
        self.preservesAspectRatio = preservesAspectRatio
        self.maxPixelCount = maxPixelCount
        self.pixelCountLimit = pixelCountLimit
        self.applyOrientation = applyOrientation
        self.firstFrameOnly = firstFrameOnly
        self.scale = scale
        self.maxFrameCount = maxFrameCount
        self.maxAnimationByteCount = maxAnimationByteCount
        self.convertsToSRGB = convertsToSRGB
    }

    /// Throws unless an animation of `frameCount` canvases of `canvas` fits ``maxFrameCount`` and
    /// ``maxAnimationByteCount`` (always fits with ``firstFrameOnly``): what an animated coder calls
    /// once it knows the frame count, before allocating any frame.
    /// - Throws: ``ImageCodingError/animationTooLarge(frameCount:byteCount:frameLimit:byteLimit:)``.
    public func checkAnimationBudget(frameCount: Int, canvas: PixelSize) throws(ImageCodingError) {
        let frameCount = decodedFrameCount(of: frameCount)
        guard frameCount > 1 else { return }
        let (perFrame, overflow) = canvas.pixelCount.multipliedReportingOverflow(by: 4)
        let (total, overflowTotal) = perFrame.multipliedReportingOverflow(by: frameCount)
        let byteCount = overflow || overflowTotal ? Int.max : total
        if frameCount > maxFrameCount || byteCount > maxAnimationByteCount {
            throw .animationTooLarge(frameCount: frameCount, byteCount: byteCount, frameLimit: maxFrameCount,
                                     byteLimit: maxAnimationByteCount)
        }
    }

    /// How many of an animation's `frameCount` frames a decode under these options yields: 1 with
    /// ``firstFrameOnly``, at most ``maxDecodedFrames``, at least 1.
    public func decodedFrameCount(of frameCount: Int) -> Int {
        firstFrameOnly ? 1 : max(1, min(frameCount, maxDecodedFrames ?? Int.max))
    }

    /// Whether these options decode an image exactly as stored: full size (no thumbnail size, no
    /// ``maxPixelCount``), every frame, turned upright. Only such a decode may be cached under the
    /// key of the bytes it came from; any other is a derived image (``ImageCache`` never promotes it).
    public var decodesFullImage: Bool {
        let thumbnail = thumbnailPixelSize.map { $0.width > 0 && $0.height > 0 } ?? false
        return !thumbnail && (maxPixelCount ?? 0) <= 0 && !firstFrameOnly && maxDecodedFrames == nil && applyOrientation
    }

    /// The size a decode of a `source`-sized image produces under these options (before orientation).
    ///
    /// Follows SDWebImage's rules: a thumbnail size at least as large as the source in both
    /// dimensions (or with a zero dimension) means full size; otherwise the image fits inside it,
    /// rounding the other side to the nearest pixel (5250×3450 into 400×300 is 400×263), and never
    /// below 1 pixel. With ``thumbnailCoversBox`` it covers the box instead (5250×3450 over 400×300
    /// is 457×300), never larger than the source. ``maxPixelCount`` then scales down further if needed.
    public func outputSize(forSource source: PixelSize) -> PixelSize {
        var size = source
        if let box = thumbnailPixelSize, box.width > 0, box.height > 0,
           box.width < source.width || box.height < source.height {
            if thumbnailCoversBox {
                let ratio = max(Double(box.width) / Double(source.width), Double(box.height) / Double(source.height))
                if ratio < 1 {
                    size = PixelSize(width: max(box.width, Int((Double(source.width) * ratio).rounded())),
                                     height: max(box.height, Int((Double(source.height) * ratio).rounded())))
                }
            } else if preservesAspectRatio {
                let sourceRatio = Double(source.width) / Double(source.height)
                let boxRatio = Double(box.width) / Double(box.height)
                if sourceRatio > boxRatio {
                    size = PixelSize(width: box.width, height: Int((Double(box.width) / sourceRatio).rounded()))
                } else {
                    size = PixelSize(width: Int((Double(box.height) * sourceRatio).rounded()), height: box.height)
                }
            } else {
                size = PixelSize(width: min(box.width, source.width), height: min(box.height, source.height))
            }
        }
        if let limit = maxPixelCount, limit > 0, size.pixelCount > limit {
            let factor = (Double(limit) / Double(size.pixelCount)).squareRoot()
            size = PixelSize(width: Int(Double(size.width) * factor), height: Int(Double(size.height) * factor))
            // Floating point may leave one pixel too many; shave until the limit holds.
            while size.pixelCount > limit && size.width > 1 && size.height > 1 {
                if size.width >= size.height { size.width -= 1 } else { size.height -= 1 }
            }
        }
        return PixelSize(width: min(max(size.width, 1), source.width), height: min(max(size.height, 1), source.height))
    }
}

extension Image {
    /// This image resampled (area average) to ``DecodeOptions/outputSize(forSource:)`` of its size, or
    /// itself when that is its size: the thumbnail and scale-down step for a coder whose library cannot
    /// scale on load. A frame of an animation is resized on its own.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)``.
    public func fitted(to options: DecodeOptions) throws(ImageCodingError) -> Image {
        try Resampler.fitted(self, options: options)
    }
}

