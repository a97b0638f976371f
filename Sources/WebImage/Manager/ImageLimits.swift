/// The bounds a server sets in one place (``WebImageManagerConfig/limits``) on what a load may read,
/// decode and produce. Each is checked before the memory it guards is spent; a load past one fails
/// with a typed error and is cached nowhere.
public struct ImageLimits: Sendable, Hashable {
    /// The largest source body, in bytes; default 64 MiB. Passed to the loader with each request
    /// (``ImageLoadRequest/maxResponseBytes``): the ``Downloader`` refuses a larger
    /// `Content-Length` before reading and stops reading past it
    /// (``WebImageError/responseTooLarge(limit:url:)``), within its own
    /// ``DownloaderConfig/maxResponseBytes``; any other loader's body is checked when it arrives.
    public var maxSourceBytes: Int
    /// The most pixels a source may declare, checked on its header before anything is allocated;
    /// default ``DecodeOptions/defaultPixelCountLimit`` (100 megapixels).
    public var maxSourcePixels: Int
    /// The most frames an animation may have; default ``DecodeOptions/defaultMaxFrameCount``.
    public var maxFrameCount: Int
    /// The most pixels an encoded variant, and any image a transform makes on the way, may have;
    /// default 40 megapixels (an 8K image). A transform whose plan
    /// (``ImageTransformer/plannedSizes(for:)``) passes it fails with
    /// ``WebImageError/transformFailed(_:url:)`` before it runs (before the source is decoded, when
    /// the source's header gives its size); a variant asked for larger fails with
    /// ``WebImageError/encodingFailed(_:url:)`` carrying ``ImageCodingError/imageTooLarge(width:height:limit:)``
    /// before it is encoded.
    public var maxOutputPixels: Int
    /// The most bytes of RGBA an animation's frames may take together (frames × canvas × 4), checked
    /// before any frame is allocated; default ``DecodeOptions/defaultMaxAnimationByteCount``.
    public var maxAnimationBytes: Int = DecodeOptions.defaultMaxAnimationByteCount
    /// The frames of an animation that are kept: the first this many are decoded and the rest never
    /// are (``DecodeOptions/maxDecodedFrames``, imgproxy's `max_animation_frames`); default `nil`: all.
    public var maxDecodedFrames: Int?

    /// Creates limits; every parameter defaults to the property's documented default.
    public init(maxSourceBytes: Int = 64 << 20, maxSourcePixels: Int = DecodeOptions.defaultPixelCountLimit,
                maxFrameCount: Int = DecodeOptions.defaultMaxFrameCount, maxOutputPixels: Int = 40_000_000) {
        self.maxSourceBytes = maxSourceBytes
        self.maxSourcePixels = maxSourcePixels
        self.maxFrameCount = maxFrameCount
        self.maxOutputPixels = maxOutputPixels
    }
}
