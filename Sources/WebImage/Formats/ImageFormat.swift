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
    /// JPEG XL (a bare codestream or the ISO-BMFF-style container).
    public static let jxl = ImageFormat(rawValue: "jxl")
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

    /// The MIME type of the format, such as `image/png`, from its ``descriptor``;
    /// `application/octet-stream` for a format nobody registered.
    public var mimeType: String {
        descriptor?.mimeType ?? "application/octet-stream"
    }

    /// The usual file extension without a dot (`jpg` for JPEG), from its ``descriptor``; `nil` for a
    /// format nobody registered.
    public var fileExtension: String? {
        descriptor?.fileExtension
    }

    /// What ``ImageFormatRegistry/shared`` knows of this format; `nil` for ``unknown`` and for formats
    /// nobody registered.
    public var descriptor: ImageFormatDescriptor? {
        ImageFormatRegistry.shared.descriptor(for: self)
    }

    /// The format a name stands for in a URL, a command line or a configuration (`jpg`, `JPEG`, `tif`,
    /// any case), from ``ImageFormatRegistry/shared``; `nil` for a name no format lists.
    public init?(named name: String) {
        guard let format = ImageFormatRegistry.shared.format(named: name) else { return nil }
        self = format
    }
}
