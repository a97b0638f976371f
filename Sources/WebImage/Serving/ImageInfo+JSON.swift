import Foundation

extension ImageInfo {
    /// The facts a JSON rendering includes (imgproxy's `/info` options, plus WebImage's own).
    public struct Fields: OptionSet, Sendable, Hashable {
        /// The set's bits.
        public let rawValue: Int
        /// Creates a set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// `"size"`: the source's bytes (imgproxy's `size` option).
        public static let size = Fields(rawValue: 1 << 0)
        /// `"format"` and `"mime_type"` (imgproxy's `format`).
        public static let format = Fields(rawValue: 1 << 1)
        /// `"width"`, `"height"` (upright) and `"orientation"` (imgproxy's `dimensions`).
        public static let dimensions = Fields(rawValue: 1 << 2)
        /// `"alpha"` (imgproxy's `alpha`).
        public static let alpha = Fields(rawValue: 1 << 3)
        /// `"pages_number"`: frames (imgproxy's `pages_number`).
        public static let pagesNumber = Fields(rawValue: 1 << 4)
        /// `"average"`: `{"R","G","B","A"}` (imgproxy's `average`).
        public static let average = Fields(rawValue: 1 << 5)
        /// `"dominant_color"`: `{"R","G","B","A"}`.
        public static let dominantColor = Fields(rawValue: 1 << 6)
        /// `"blurhash"` (imgproxy's `blurhash`; 4×3 components).
        public static let blurHash = Fields(rawValue: 1 << 7)
        /// `"thumbhash"`: base64.
        public static let thumbHash = Fields(rawValue: 1 << 8)
        /// `"thumb_hash"`: upper-case hex, as imgproxy Pro's `thumb_hash` option answers it.
        public static let hexThumbHash = Fields(rawValue: 1 << 10)
        /// `"color_profile"`, `"duration_ms"` and `"loop_count"` (animations).
        public static let details = Fields(rawValue: 1 << 9)

        /// What `webimage serve`'s `/info` answers by default: imgproxy's default answer (size,
        /// format, dimensions) with WebImage's placeholders.
        public static let standard: Fields = [.size, .format, .dimensions, .blurHash, .thumbHash, .dominantColor]
        /// Every field.
        public static let all: Fields = [.standard, .alpha, .pagesNumber, .average, .details]
    }

    /// The facts as one JSON object in the shape of imgproxy's `/info` answer where imgproxy has the
    /// field (`format`, `mime_type`, `width`, `height`, `orientation`, `size`, `alpha`, `pages_number`,
    /// `average`, `blurhash`),
    /// with WebImage's own `thumbhash` (base64), `dominant_color`, `orientation`, `color_profile`,
    /// `duration_ms` and `loop_count`. Keys are sorted, so the same facts give the same bytes.
    /// imgproxy's own `thumb_hash` (upper-case hex) is there with ``Fields/hexThumbHash``.
    ///
    /// - Parameter fields: which fields to write; default ``Fields/all``.
    /// - Returns: compact UTF-8 JSON, no trailing newline.
    public func json(_ fields: Fields = .all) -> Data {
        // Written by hand, keys in sorted order: a warm `/info` answer is this and an MD5, and
        // JSONSerialization cost more than the rest of the request together.
        var members: [(String, String)] = []
        func rgba(_ color: PixelColor) -> String {
            "{\"A\":\(color.alpha),\"B\":\(color.blue),\"G\":\(color.green),\"R\":\(color.red)}"
        }
        if fields.contains(.alpha) { members.append(("alpha", hasAlpha ? "true" : "false")) }
        if fields.contains(.average) { members.append(("average", rgba(averageColor))) }
        if fields.contains(.blurHash) { members.append(("blurhash", Self.quoted(blurHash))) }
        if fields.contains(.details), let colorProfileName { members.append(("color_profile", Self.quoted(colorProfileName))) }
        if fields.contains(.dominantColor) { members.append(("dominant_color", rgba(dominantColor))) }
        if fields.contains(.details), let duration { members.append(("duration_ms", "\(Int(duration / .milliseconds(1)))")) }
        if fields.contains(.format) { members.append(("format", Self.quoted(format.rawValue))) }
        if fields.contains(.dimensions) { members.append(("height", "\(pixelSize.height)")) }
        if fields.contains(.details), frameCount > 1 { members.append(("loop_count", "\(loopCount)")) }
        if fields.contains(.format) { members.append(("mime_type", Self.quoted(format.mimeType))) }
        if fields.contains(.dimensions) { members.append(("orientation", "\(orientation.rawValue)")) }
        if fields.contains(.pagesNumber) { members.append(("pages_number", "\(frameCount)")) }
        if fields.contains(.size) { members.append(("size", "\(byteCount)")) }
        if fields.contains(.hexThumbHash) { members.append(("thumb_hash", Self.quoted(HexDigits.string(thumbHash, uppercase: true)))) }
        if fields.contains(.thumbHash) { members.append(("thumbhash", Self.quoted(thumbHashBase64))) }
        if fields.contains(.dimensions) { members.append(("width", "\(pixelSize.width)")) }
        return Data(("{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped, `/` as is.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += "\\u00" + HexDigits.string([UInt8(scalar.value)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
