import Foundation

/// How a coder encodes an ``Image``.
public struct EncodeOptions: Sendable, Hashable {
    /// Lossy quality from 0 (smallest) to 1 (best), as SDWebImage's `compressionQuality`; default 0.9.
    /// JPEG maps it to libjpeg quality 1–100, WebP and AVIF to their 0–100 scales. Lossless formats
    /// (PNG, GIF) and ``isLossless`` ignore it.
    public var compressionQuality: Double
    /// The colour that transparent pixels are composed over when the target format has no alpha
    /// (JPEG); its own alpha is ignored; default ``PixelColor/white``.
    public var backgroundColor: PixelColor
    /// Scale the image down (keeping its aspect ratio) so that neither side exceeds this many pixels
    /// before encoding; default `nil` (encode at full size). Every frame of an animation is scaled.
    public var maxPixelSize: Int?
    /// PNG compression level 0–9, on zlib's scale (libdeflate compresses); default 3. On a DIV2K
    /// photograph level 3 wrote files about 1 % larger than level 6 in about 10 % less time; 0 stores
    /// the rows unfiltered and uncompressed.
    public var pngCompressionLevel: Int
    /// Whether formats that can be either lossy or lossless write losslessly (WebP's VP8L, AVIF with
    /// 4:4:4 identity colour and quantizer 0); default `false`. ``compressionQuality`` and
    /// ``maxFileSize`` then do not apply. PNG and GIF are always lossless; JPEG never is.
    public var isLossless: Bool
    /// How hard the encoder works for smaller files, from 0 (fastest) to 1 (smallest); default `nil`,
    /// each library's own default (WebP method 4 of 0–6 as `cwebp`; AVIF speed 6 of 10–0 as `avifenc`).
    /// WebP maps it to method `round(effort × 6)`, AVIF to speed `round(10 − effort × 10)`; PNG has
    /// ``pngCompressionLevel``; JPEG and GIF ignore it.
    public var compressionEffort: Double?
    /// Whether an animated image is written as its first frame only, even to a format that can
    /// animate (GIF, PNG as APNG, WebP, AVIF); default `false`: every frame, with its duration and
    /// the image's loop count. Formats that cannot animate (JPEG) always write the first frame.
    public var firstFrameOnly: Bool
    /// The largest file, in bytes, a lossy encode may write, as SDWebImage's `maxFileSize`; default
    /// `nil` (no limit). The encoder then writes the highest quality up to ``compressionQuality``
    /// whose file fits, searched to within 1/100 of quality; when even the lowest quality does not
    /// fit, the lowest-quality file is returned (it is never an error). Lossless encodes ignore it.
    public var maxFileSize: Int?

    /// Whether JPEG is written progressive (libjpeg's standard scan script: a coarse image first, then
    /// refinements; usually a little smaller above 10 KB); default `false` (baseline). Other formats
    /// ignore it.
    public var isProgressive: Bool

    /// An ICC profile to embed, telling viewers the colour space of the pixels (JPEG `APP2
    /// ICC_PROFILE` segments, PNG `iCCP`, WebP `ICCP`, AVIF `colr`); default `nil`: none, the pixels
    /// are sRGB. GIF has no place for one. Encoding through ``CoderRegistry/encode(_:as:options:)``
    /// writes it for every format that has one.
    public var colorProfile: Data?

    /// A copyright notice to write as the only EXIF field (`Copyright`, tag 0x8298: JPEG `APP1`, PNG
    /// `eXIf`, WebP `EXIF`, AVIF `Exif`); default `nil`: no EXIF at all. GIF has no place for one.
    public var copyright: String?

    /// Qualities (0...1) that replace ``compressionQuality`` when the output is one of these formats,
    /// such as imgproxy's per-format defaults (`[.webp: 0.79, .avif: 0.63]`); default none. Lets a
    /// caller whose output format is decided later (``VariantFormat/source``, an `Accept` choice)
    /// state every format's setting at once; ``resolved(for:)`` applies them.
    public var formatQualities: [ImageFormat: Double] = [:]

    /// Efforts (0...1) that replace ``compressionEffort`` for these formats, such as a fast AVIF speed
    /// (`[.avif: 0.1]`); default none.
    public var formatEfforts: [ImageFormat: Double] = [:]

    /// Whether a vector source (SVG) is answered as its own document, made safe by its coder
    /// (``PassthroughImageCoder``: an SVG sanitised), whatever raster format is chosen for other
    /// sources: what imgproxy does when a URL names no format, unless `IMGPROXY_ALWAYS_RASTERIZE_SVG`.
    /// Default `false`: a vector source is rendered and encoded like any other, unless the format
    /// asked for is its own (``VariantFormat/exactly(_:)`` with ``ImageFormat/svg``), which always
    /// passes it.
    public var passesVectorSource = false

    /// A quality chosen per picture by a search (imgproxy's `autoquality`) instead of
    /// ``compressionQuality``: the lowest quality that looks right by ``DSSIM``, or the highest whose
    /// file fits a size; default `nil` (the fixed quality). Applies to lossy still encodes through
    /// ``CoderRegistry/encode(_:as:options:)`` (``CoderRegistry/encodeSearchingQuality(_:as:options:)``
    /// says what the search did). ``maxFileSize`` still bounds every file it tries.
    public var automaticQuality: AutomaticQuality?

    /// These options as an encode to `format` uses them: its entries of ``formatQualities`` and
    /// ``formatEfforts`` in place of ``compressionQuality`` and ``compressionEffort``.
    public func resolved(for format: ImageFormat) -> EncodeOptions {
        var options = self
        if let quality = formatQualities[format] { options.compressionQuality = quality }
        if let effort = formatEfforts[format] { options.compressionEffort = effort }
        options.formatQualities = [:]
        options.formatEfforts = [:]
        return options
    }

    /// Creates encode options; every parameter defaults to the property's documented default.
    public init(
        compressionQuality: Double = 0.9, backgroundColor: PixelColor = .white,
        maxPixelSize: Int? = nil, pngCompressionLevel: Int = 3, isLossless: Bool = false,
        compressionEffort: Double? = nil, firstFrameOnly: Bool = false, maxFileSize: Int? = nil, isProgressive: Bool = false,
        colorProfile: Data? = nil, copyright: String? = nil
    ) {
        self.colorProfile = colorProfile
        self.copyright = copyright
        self.compressionQuality = compressionQuality
        self.backgroundColor = backgroundColor
        self.maxPixelSize = maxPixelSize
        self.pngCompressionLevel = pngCompressionLevel
        self.isLossless = isLossless
        self.compressionEffort = compressionEffort
        self.firstFrameOnly = firstFrameOnly
        self.maxFileSize = maxFileSize
        self.isProgressive = isProgressive
    }

    /// The EXIF block ``copyright`` makes (a little-endian TIFF structure whose only field is
    /// `Copyright`), for coders that write metadata themselves, as AVIF's does; `nil` without one.
    public var copyrightEXIF: Data? {
        copyright.map { Data(EXIFCopyright.tiff(copyright: $0)) }
    }

    /// ``compressionQuality`` clamped to 0...1 (NaN reads as the default, 0.9).
    public var clampedQuality: Double {
        compressionQuality.isNaN ? 0.9 : min(max(compressionQuality, 0), 1)
    }

    /// ``compressionEffort`` clamped to 0...1, or `nil` for the library's default.
    public var clampedEffort: Double? {
        guard let effort = compressionEffort, !effort.isNaN else { return nil }
        return min(max(effort, 0), 1)
    }

    /// Runs a lossy encode under ``maxFileSize``: `encode` is called with a quality in 0...1 and
    /// returns the file it writes at that quality.
    ///
    /// Without a limit (or with ``isLossless``) it is called once with ``clampedQuality``. With one,
    /// the highest quality up to ``clampedQuality`` whose file fits is searched for by bisection (at
    /// most 8 encodes, to within 1/100); when no quality fits, the lowest-quality file is returned.
    /// Coders of other packages can use it to honour ``maxFileSize`` the same way.
    /// - Throws: what `encode` throws.
    public func encodingWithinMaxFileSize<Failure: Error>(
        _ encode: (Double) throws(Failure) -> Data
    ) throws(Failure) -> Data {
        let top = clampedQuality
        let first = try encode(top)
        guard let limit = maxFileSize, !isLossless, first.count > limit else { return first }
        let floor = try encode(0)
        guard floor.count <= limit else { return floor }
        // Invariant: `best` (quality `low`) fits; quality `high` does not.
        var low = 0.0, high = top, best = floor
        while high - low > 0.01 {
            let middle = ((low + high) / 2 * 100).rounded() / 100
            guard middle > low, middle < high else { break }
            let candidate = try encode(middle)
            if candidate.count <= limit {
                low = middle
                best = candidate
            } else {
                high = middle
            }
        }
        return best
    }
}

extension EncodeOptions {
    /// The frames an encode of `image` writes: every frame (only the first with ``firstFrameOnly``),
    /// each scaled down under ``maxPixelSize`` with an area-averaging filter, keeping its aspect
    /// ratio, and narrowed to 8 bits per channel unless `keepingHighBitDepth` (an encoder that
    /// writes 16-bit samples: PNG, TIFF, JPEG XL). Encoders (in this package or another) start here.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` if scaling or narrowing runs out of memory.
    public func frames(of image: Image, keepingHighBitDepth: Bool = false) throws(ImageCodingError) -> [ImageFrame] {
        let all = (keepingHighBitDepth ? image : try image.reducedToEightBits()).frames
        let frames = firstFrameOnly ? [all[0]] : all
        guard let limit = maxPixelSize, limit > 0, max(image.width, image.height) > limit else { return frames }
        let size = PNGCoder.size(of: image.size, fittingSide: limit)
        return try frames.map { (frame) throws(ImageCodingError) in
            ImageFrame(image: try Resampler.resample(frame.image, to: size), duration: frame.duration,
                       storedDuration: frame.storedDuration)
        }
    }
}
