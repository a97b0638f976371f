import Foundation
import WebImage

/// An imgproxy `/info` URL's options, parsed with imgproxy's rules (``ArgumentReader``): which facts
/// to answer, the BlurHash's components, and when the URL expires.
///
/// Honoured: `size`/`s`, `format`/`f`, `dimensions`/`d`, `alpha`/`a`, `pages_number`/`pn`,
/// `average`/`avg`, `dominant_colors`/`dc` (WebImage's one `dominant_color`), `blurhash`/`bh:x:y`
/// (1–9 each; `0:0` leaves it out), `thumb_hash`/`th` (imgproxy's upper-case hex `thumb_hash`,
/// beside WebImage's base64 `thumbhash`), `expires`/`exp`, `cachebuster`/`cb`, `page`/`pg:0`.
/// `exif`, `iptc`, `xmp` and `video_meta` are accepted and answer nothing (WebImage reads no such
/// metadata). Everything else imgproxy Pro computes (palettes, crops, objects, hashes, colour
/// spaces, later pages, presets) is refused with a reason, never silently ignored.
struct InfoRequest: Sendable, Equatable {
    /// The facts to answer: by default imgproxy's (size, format, dimensions) and the placeholders.
    var fields: ImageInfo.Fields = .standard
    /// BlurHash components along the width and the height.
    var blurHashX = 4
    var blurHashY = 3
    /// A Unix time after which the URL answers 404 (0: never).
    var expires: Int64 = 0

    typealias Invalid = ProcessingPath.Invalid

    /// Parses `path`'s options, their arguments separated by `separator` (imgproxy's `IMGPROXY_ARGUMENTS_SEPARATOR`).
    init(path: ProcessingPath, separator: Character = ":", now: Date = Date()) throws {
        if let text = path.extensionText { throw Invalid(reason: "an /info URL has no output format (\(text))") }
        for segment in path.optionSegments { try apply(segment, separator: separator) }
        if expires > 0 && Double(expires) < now.timeIntervalSince1970 { throw ProcessingRequest.Expired() }
    }

    private mutating func apply(_ segment: String, separator: Character) throws(Invalid) {
        var arguments = segment.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        let name = arguments.removeFirst()
        let reader = ArgumentReader(option: name, arguments: arguments)
        func toggle(_ field: ImageInfo.Fields, limit: Int = 1) throws(Invalid) {
            try reader.limit(limit)
            guard let on = reader.boolean(0) else { return }
            if on { fields.insert(field) } else { fields.remove(field) }
        }
        switch name {
        case "size", "s": try toggle(.size)
        case "format", "f": try toggle(.format)
        case "dimensions", "d": try toggle(.dimensions)
        case "alpha", "a": try toggle(.alpha, limit: 2)
        case "pages_number", "pn": try toggle(.pagesNumber)
        case "average", "avg": try toggle(.average, limit: 2)
        case "dominant_colors", "dc": try toggle(.dominantColor, limit: 2)
        case "thumb_hash", "th": try toggle(.hexThumbHash)
        case "blurhash", "bh":
            try reader.limit(2)
            let x = try reader.length(0, upTo: 9) ?? blurHashX, y = try reader.length(1, upTo: 9) ?? blurHashY
            if x == 0 || y == 0 {
                fields.remove(.blurHash)
            } else {
                (blurHashX, blurHashY) = (x, y)
                fields.insert(.blurHash)
            }
        case "exif", "ex", "iptc", "xmp", "video_meta", "vm":
            try reader.limit(2)   // nothing to answer: WebImage reads no such metadata
        case "page", "pg":
            try reader.limit(1)
            guard (try reader.length(0, upTo: Int(Int32.max)) ?? 0) == 0 else { throw Invalid(reason: "\(name): only the first page is read") }
        case "cachebuster", "cb": try reader.limit(1)
        case "expires", "exp":
            try reader.limit(1)
            guard let text = arguments.first, let value = Int64(text) else { throw Invalid(reason: "\(name): must be a Unix time") }
            expires = value
        case "palette", "p", "crop", "c", "detect_objects", "do", "classify", "cl", "perceptual_hash", "phash", "ph",
             "calc_hashsums", "chs", "hashsum", "hs", "colorspace", "cs", "bands", "b", "sample_format", "sf",
             "objects_position", "obj_pos", "op", "video_thumbnail_second", "vts", "video_thumbnail_keyframes", "vtk",
             "preset", "pr", "bypass_cache", "bc", "cache_tags", "ct":
            throw Invalid(reason: "\(name): this /info option is not supported (see Docs/imgproxy-options.md)")
        default:
            throw Invalid(reason: "unknown info option: \(name)")
        }
    }
}
