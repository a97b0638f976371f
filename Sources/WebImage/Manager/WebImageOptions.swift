/// Flags that change how ``WebImageManager`` loads one image (SDWebImage's `SDWebImageOptions`, less
/// the ones that only make sense with a user interface; the README maps all of them).
///
/// The default, `[]`, looks in memory, then on disk, then downloads at normal priority, decodes at
/// full size, and stores the result in both tiers in the background.
public struct WebImageOptions: OptionSet, Sendable, Hashable {
    /// The flags' bits.
    public let rawValue: Int

    /// Creates a set from its bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Try a URL even if it is on the failed-URL blocklist; a success removes it from the list.
    public static let retryFailed = WebImageOptions(rawValue: 1 << 0)
    /// Download at ``DownloadPriority/low`` priority.
    public static let lowPriority = WebImageOptions(rawValue: 1 << 1)
    /// Download at ``DownloadPriority/high`` priority (wins over `lowPriority`).
    public static let highPriority = WebImageOptions(rawValue: 1 << 2)
    /// Decode while downloading and deliver partial images as ``ImageLoadEvent/partialImage(_:)``.
    public static let progressiveLoad = WebImageOptions(rawValue: 1 << 3)
    /// Revalidate a cached image with the server (`If-None-Match` / `If-Modified-Since`): the cached
    /// image comes first as ``ImageLoadEvent/cachedImage(_:)``, the final result is the fresh image,
    /// or the cached one when the server answers 304.
    public static let refreshCached = WebImageOptions(rawValue: 1 << 4)
    /// Send cookies and keep those the server sets.
    public static let handleCookies = WebImageOptions(rawValue: 1 << 5)
    /// Accept invalid TLS certificates. URLSession on Linux cannot do this per request, so an `https`
    /// load with this flag throws ``WebImageError/unsupportedOption(_:url:)`` rather than silently
    /// checking certificates anyway.
    public static let allowInvalidSSLCertificates = WebImageOptions(rawValue: 1 << 6)
    /// Scale images larger than ``WebImageContext/scaleDownLimitBytes`` (default 60 MB of RGBA) down
    /// while decoding.
    public static let scaleDownLargeImages = WebImageOptions(rawValue: 1 << 7)
    /// Also return the stored bytes for a memory-cache hit (a disk read).
    public static let queryMemoryData = WebImageOptions(rawValue: 1 << 8)
    /// Never download: a cache miss throws ``WebImageError/notInCache(url:)``.
    public static let fromCacheOnly = WebImageOptions(rawValue: 1 << 9)
    /// Skip the cache query and always download (the result is still stored).
    public static let fromLoaderOnly = WebImageOptions(rawValue: 1 << 10)
    /// Accepted for SDWebImage parity, with no effect: WebImage images are always decoded pixels, so
    /// there is no lazy decode to avoid.
    public static let avoidDecodeImage = WebImageOptions(rawValue: 1 << 11)
    /// Decode only the first frame of an animated image.
    public static let decodeFirstFrameOnly = WebImageOptions(rawValue: 1 << 12)
    /// Apply the transformer to animated images too (by default they are returned untransformed).
    public static let transformAnimatedImage = WebImageOptions(rawValue: 1 << 13)
    /// Return only after the disk cache has the image (by default the disk write finishes in the
    /// background); a failed write then fails the load.
    public static let waitStoreCache = WebImageOptions(rawValue: 1 << 14)
    /// Store the result in memory only, never on disk.
    public static let cacheMemoryOnly = WebImageOptions(rawValue: 1 << 15)
    /// Keep the source's pixels as the file stores them: no conversion from an embedded ICC profile
    /// to sRGB (which the manager does by default, as imgproxy and sharp do), cached apart from the
    /// sRGB pixels. An encoded variant (``WebImageManager/loadVariant(url:format:encoding:options:context:)``)
    /// then carries the source's profile (read from the original's stored bytes).
    public static let preserveColorProfile = WebImageOptions(rawValue: 1 << 16)
    /// Keep the source's EXIF `Copyright` notice in an encoded variant, as its only metadata (read
    /// from the original's stored bytes: JPEG, PNG and WebP sources). Without it a variant carries
    /// no EXIF at all.
    public static let preserveCopyright = WebImageOptions(rawValue: 1 << 17)
    /// Keep a still source of more than 8 bits per channel at 16 bits (``DecodeOptions/keepsHighBitDepth``)
    /// through the transforms that take them and into encoders that write them (PNG, TIFF and JPEG XL
    /// 16-bit, AVIF 12-bit),
    /// cached apart from the 8-bit pixels: imgproxy's `preserve_hdr`. Without it every image is
    /// decoded to 8 bits per channel.
    public static let preserveHighBitDepth = WebImageOptions(rawValue: 1 << 18)

    /// The download priority these flags ask for.
    var downloadPriority: DownloadPriority {
        contains(.highPriority) ? .high : contains(.lowPriority) ? .low : .normal
    }

    /// The flags that change what a load returns (priority and store-waiting flags do not), used to
    /// decide which concurrent loads may share one result.
    var resultAffecting: WebImageOptions {
        subtracting([.lowPriority, .highPriority, .waitStoreCache, .retryFailed])
    }
}
