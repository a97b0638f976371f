/// Everything WebImage knows about one file format, in one place: its names, extension and media
/// type, how its bytes are recognised, what it can hold, and how a server encodes it by default.
///
/// ``ImageFormatRegistry/shared`` holds a descriptor for every format WebImage recognises; the server's
/// format names, qualities and efforts, `Accept` negotiation, `/info`, the command-line tool and the
/// corpus check read them instead of lists of their own. Whether a format can be *decoded or encoded* is
/// not a fact of the format but of the coders registered (``CoderRegistry/canEncode(_:)``): a descriptor
/// says what the format can hold when a coder writes it.
public struct ImageFormatDescriptor: Sendable {
    /// What a format's files can hold.
    public struct Traits: OptionSet, Sendable, Hashable {
        /// The bits of the set.
        public let rawValue: Int
        /// Creates a set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// An alpha channel (PNG, GIF, WebP, AVIF, HEIF, JPEG XL, TIFF, BMP, ICO, SVG; not JPEG).
        public static let alpha = Traits(rawValue: 1 << 0)
        /// Several frames with durations, when read.
        public static let animationLoad = Traits(rawValue: 1 << 1)
        /// Several frames with durations, when written: a server may pick the format to hold an animation
        /// (GIF, WebP, AVIF, JPEG XL; PNG writes APNG only when named, as imgproxy never picks it for one).
        public static let animationSave = Traits(rawValue: 1 << 2)
        /// An embedded ICC profile.
        public static let colorProfile = Traits(rawValue: 1 << 3)
        /// A lossy encode whose size is steered by a quality.
        public static let quality = Traits(rawValue: 1 << 4)
        /// More than 8 bits per sample (16-bit PNG and TIFF, 10/12-bit AVIF, JPEG XL).
        public static let highBitDepth = Traits(rawValue: 1 << 5)
        /// Vector data rasterised at a chosen size (SVG).
        public static let vector = Traits(rawValue: 1 << 6)
        /// Several pages, read one at a time (TIFF).
        public static let pages = Traits(rawValue: 1 << 7)
    }

    /// How ICC profiles and EXIF travel in a format's container: which walker reads and writes them.
    public enum MetadataContainer: String, Sendable, Hashable {
        /// JPEG marker segments (`APP1` EXIF, `APP2 ICC_PROFILE`).
        case jpegSegments
        /// PNG chunks (`iCCP`, `eXIf`).
        case pngChunks
        /// RIFF chunks in a `VP8X` WebP (`ICCP`, `EXIF`).
        case riffChunks
        /// ISO-BMFF boxes (`colr`, `Exif` items) of AVIF and HEIF.
        case isoBoxes
        /// TIFF tags (`ICCProfile` 34675, the EXIF IFD).
        case tiffTags
        /// JPEG XL's container boxes (`Exif`) and its codestream's colour encoding.
        case jxlBoxes
        /// No place for either (GIF, BMP, ICO, SVG).
        case none
    }

    /// The format described.
    public var format: ImageFormat
    /// The names a URL or a command line may use for it, lower-case, the canonical one first
    /// (`["jpeg", "jpg"]`, `["tiff", "tif"]`).
    public var names: [String]
    /// The usual file extension without a dot (`jpg` for JPEG).
    public var fileExtension: String
    /// The media type answered in `Content-Type` and looked for in `Accept` (`image/jpeg`).
    public var mimeType: String
    /// What the format can hold.
    public var traits: Traits
    /// The sample depths an encode can write, in bits (`[8]` for most; `[8, 16]` for PNG and TIFF).
    public var savedBitDepths: [Int]
    /// The quality (1–100) a server encodes at when neither the URL nor the configuration names one
    /// (imgproxy's defaults: 80, WebP 79, AVIF 63, JPEG XL 77); `nil` for a format without a quality.
    public var defaultQuality: Int?
    /// The encoder effort a server uses by default, on the library's own scale (WebP method 4 of 0–6,
    /// AVIF speed 9 of 0–9, JPEG XL effort 4 of 1–9: imgproxy's defaults); `nil` where there is none.
    public var defaultEffort: Int?
    /// Where the format stands when a client's `Accept` header picks the output (JPEG XL 0, AVIF 1,
    /// WebP 2: imgproxy's order); `nil` for a format never chosen that way.
    public var negotiationRank: Int?
    /// How ICC profiles and EXIF travel in the format's files.
    public var metadataContainer: MetadataContainer
    /// Whether the first bytes of a file (up to 1 KiB; often fewer) are this format's. Never trusts a
    /// name or a media type.
    public var detector: @Sendable ([UInt8]) -> Bool

    /// Creates a descriptor; see each property for its meaning. Defaults: no aliases, the canonical
    /// name as extension, no traits, 8-bit output, no quality, effort or negotiation, no metadata.
    public init(format: ImageFormat, names: [String] = [], fileExtension: String? = nil, mimeType: String,
                traits: Traits = [], savedBitDepths: [Int] = [8], defaultQuality: Int? = nil, defaultEffort: Int? = nil,
                negotiationRank: Int? = nil, metadataContainer: MetadataContainer = .none,
                detector: @escaping @Sendable ([UInt8]) -> Bool) {
        self.format = format
        self.names = names.isEmpty ? [format.rawValue] : names
        self.fileExtension = fileExtension ?? format.rawValue
        self.mimeType = mimeType
        self.traits = traits
        self.savedBitDepths = savedBitDepths
        self.defaultQuality = defaultQuality
        self.defaultEffort = defaultEffort
        self.negotiationRank = negotiationRank
        self.metadataContainer = metadataContainer
        self.detector = detector
    }
}
