import Foundation

extension ImageInfo {
    /// The facts a JSON rendering includes (imgproxy's `/info` options, plus WebImage's own).
    public struct Fields: OptionSet, Sendable, Hashable {
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
        var object: [String: Any] = [:]
        func rgba(_ color: PixelColor) -> [String: Int] {
            ["R": Int(color.red), "G": Int(color.green), "B": Int(color.blue), "A": Int(color.alpha)]
        }
        if fields.contains(.format) { (object["format"], object["mime_type"]) = (format.rawValue, format.mimeType) }
        if fields.contains(.dimensions) {
            (object["width"], object["height"], object["orientation"]) = (pixelSize.width, pixelSize.height, orientation.rawValue)
        }
        if fields.contains(.size) { object["size"] = byteCount }
        if fields.contains(.alpha) { object["alpha"] = hasAlpha }
        if fields.contains(.pagesNumber) { object["pages_number"] = frameCount }
        if fields.contains(.average) { object["average"] = rgba(averageColor) }
        if fields.contains(.dominantColor) { object["dominant_color"] = rgba(dominantColor) }
        if fields.contains(.blurHash) { object["blurhash"] = blurHash }
        if fields.contains(.thumbHash) { object["thumbhash"] = thumbHashBase64 }
        if fields.contains(.hexThumbHash) { object["thumb_hash"] = thumbHash.map { String(format: "%02X", $0) }.joined() }
        if fields.contains(.details) {
            if let colorProfileName { object["color_profile"] = colorProfileName }
            if let duration { object["duration_ms"] = Int(duration / .milliseconds(1)) }
            if frameCount > 1 { object["loop_count"] = loopCount }
        }
        // Only strings, numbers, booleans and dictionaries of them: serialisation cannot fail.
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }
}
