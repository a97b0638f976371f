import Foundation

/// An image file format, identified by the bytes of a file, never by its name or `Content-Type`.
///
/// The well-known formats are static members; a custom coder may define more with
/// ``init(rawValue:)``. ``init(sniffing:)`` recognises a format from its first bytes.
public struct ImageFormat: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// A short lower-case name, such as `"png"`; also the usual file extension.
    public let rawValue: String

    /// Creates a format with the given name. Use the static members for the formats WebImage knows.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Portable Network Graphics.
    public static let png = ImageFormat(rawValue: "png")
    /// JPEG (JFIF or EXIF).
    public static let jpeg = ImageFormat(rawValue: "jpeg")
    /// Graphics Interchange Format (GIF87a, GIF89a).
    public static let gif = ImageFormat(rawValue: "gif")
    /// WebP (RIFF container).
    public static let webp = ImageFormat(rawValue: "webp")
    /// TIFF, either byte order.
    public static let tiff = ImageFormat(rawValue: "tiff")
    /// HEIC: HEIF with HEVC-coded images.
    public static let heic = ImageFormat(rawValue: "heic")
    /// HEIF with another or unspecified coding.
    public static let heif = ImageFormat(rawValue: "heif")
    /// AVIF: HEIF with AV1-coded images.
    public static let avif = ImageFormat(rawValue: "avif")
    /// Windows bitmap.
    public static let bmp = ImageFormat(rawValue: "bmp")
    /// Windows icon or cursor.
    public static let ico = ImageFormat(rawValue: "ico")
    /// Scalable Vector Graphics (XML text).
    public static let svg = ImageFormat(rawValue: "svg")
    /// Portable Document Format.
    public static let pdf = ImageFormat(rawValue: "pdf")
    /// Bytes that match no known format.
    public static let unknown = ImageFormat(rawValue: "unknown")

    /// The format's name, such as `png`.
    public var description: String { rawValue }

    /// The MIME type of the format, such as `image/png`, or `application/octet-stream` when unknown.
    public var mimeType: String {
        switch self {
        case .png: "image/png"
        case .jpeg: "image/jpeg"
        case .gif: "image/gif"
        case .webp: "image/webp"
        case .tiff: "image/tiff"
        case .heic: "image/heic"
        case .heif: "image/heif"
        case .avif: "image/avif"
        case .bmp: "image/bmp"
        case .ico: "image/x-icon"
        case .svg: "image/svg+xml"
        case .pdf: "application/pdf"
        default: "application/octet-stream"
        }
    }

    /// The usual file extension without a dot (`jpg` for JPEG), or `nil` when unknown.
    public var fileExtension: String? {
        switch self {
        case .unknown: nil
        case .jpeg: "jpg"
        default: rawValue
        }
    }
}
