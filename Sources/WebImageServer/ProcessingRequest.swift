import Foundation
import WebImage

/// One image request's options, parsed once from a ``ProcessingPath`` with imgproxy 4's vocabulary
/// and rules (`options/parser/processing_options.go`): every open-source option by its full and
/// short names, applied left to right, a later option overwriting only the values it sets, empty
/// arguments leaving values as they were, booleans other than `1/t/true/0/f/false` read as false,
/// the extension overriding `format`. Presets expand where `preset` appears, after the `default`
/// preset.
///
/// What WebImage cannot honour is refused (400) with the option named, never ignored.
struct ProcessingRequest: Sendable {
    /// Geometry and effects, for ``WebImage/ProcessingTransformer``.
    var processing = ProcessingOptions()
    /// The output format asked for; `nil`: the server's ``FormatPolicy`` decides.
    var format: ImageFormat?
    /// `quality` (1–100; nil: per-format default).
    var quality: Int?
    /// `format_quality`.
    var formatQuality: [ImageFormat: Int] = [:]
    /// `max_bytes` (0: none).
    var maxBytes = 0
    /// `autoquality` over the server's settings.
    var autoQuality = AutoQualitySettings()
    /// `format:best` (imgproxy Pro): the smallest of several formats.
    var asksBestFormat = false
    /// `strip_color_profile`: convert to sRGB and drop the profile (default), or keep it.
    var stripsColorProfile = true
    /// `keep_copyright`.
    var keepsCopyright = false
    /// `preserve_hdr`: 16 bits kept in a result that can hold them.
    var preservesHDR = false
    /// `expires`: a Unix time after which the URL answers 404 (0: never).
    var expires: Int64 = 0
    /// `filename`: the stem of `Content-Disposition`'s filename.
    var filename: String?
    /// `return_attachment`.
    var returnsAttachment = false
    /// `raw`: the source's bytes as they are, unprocessed (the extension is not read).
    var raw = false
    /// `skip_processing`: source formats answered with the source's bytes when no other format is asked for.
    var skipProcessing: Set<ImageFormat> = []
    /// WebImage's own `webimage`/`wi` option: a transformer text, parsed once, run after the processing.
    var transformer: PipelineTransformer?
    /// `max_src_resolution` in pixels, `max_src_file_size` in bytes, `max_animation_frames`:
    /// security overrides, accepted only when the server allows them.
    var maxSourcePixels: Int?
    var maxSourceBytes: Int?
    var maxAnimationFrames: Int?
    /// `max_animation_frame_resolution` in pixels: frames are checked one by one against it instead
    /// of the animation's total against `max_src_resolution`.
    var maxAnimationFramePixels: Int?

    /// The manager's `base` limits with this request's security overrides, as imgproxy applies them
    /// (a source of more than `max_src_resolution` pixels, frames kept counted, is refused; 0 bytes
    /// means no size limit; the first `max_animation_frames` frames are kept and the rest never
    /// decoded, 1 reading the first frame only); `nil` when the request has none.
    func limits(over base: ImageLimits) -> ImageLimits? {
        guard maxSourcePixels != nil || maxSourceBytes != nil || maxAnimationFrames != nil || maxAnimationFramePixels != nil else {
            return nil
        }
        var limits = base
        if let pixels = maxSourcePixels {
            limits.maxSourcePixels = max(pixels, 1)
            limits.maxAnimationBytes = max(pixels, 1).multipliedReportingOverflow(by: 4).partialValue
        }
        if let framePixels = maxAnimationFramePixels, framePixels > 0 {
            limits.maxSourcePixels = framePixels
            limits.maxAnimationBytes = Int.max
        }
        if let bytes = maxSourceBytes { limits.maxSourceBytes = bytes > 0 ? bytes : Int(Int32.max) }
        if let frames = maxAnimationFrames { limits.maxDecodedFrames = frames }
        return limits
    }

    typealias Invalid = ProcessingPath.Invalid

    /// Why an option may not be used on this server (answered 403).
    struct Forbidden: Error, Equatable {
        var reason: String
    }

    /// The server's settings the URL's options started from (its qualities and encoder settings are
    /// read from here when the URL gives none).
    var defaults = ProcessingDefaults()
    /// The output formats whose encoders take a quality (the registry's).
    static var qualityFormats: [ImageFormat] { ImageFormatRegistry.shared.qualityFormats }

    /// The quality an output in `format` is encoded at: `quality`, then `format_quality`, then the
    /// server's per-format quality, then its quality.
    func quality(for format: ImageFormat) -> Int {
        if let quality, quality > 0 { return quality }
        if let value = formatQuality[format], value > 0 { return value }
        return defaults.formatQualities[format] ?? defaults.quality
    }

    /// What the server lets a URL say, handed down through the presets.
    private struct Rules {
        var presets: [String: [String]]
        var allowsSecurityOptions: Bool
        var separator: Character
        /// The option names a URL may use itself (a preset's options are exempt); empty: any.
        var allowedOptions: Set<String>
    }

    /// Parses `path`'s options over the server's `defaults`, after the `default` preset of `presets`
    /// when there is one; `parsing` gives the arguments separator and the options a URL may use.
    /// - Throws: ``Invalid`` for an unknown option, a bad argument or an unknown preset;
    ///   ``Forbidden`` for a security option the server does not allow, or an option outside
    ///   `parsing`'s allowed ones.
    init(path: ProcessingPath, presets: [String: [String]] = [:], allowsSecurityOptions: Bool = false,
         defaults: ProcessingDefaults = ProcessingDefaults(), parsing: URLParsing = URLParsing(),
         clientHints: (dpr: Double?, width: Int?) = (nil, nil), now: Date = Date()) throws {
        let rules = Rules(presets: presets, allowsSecurityOptions: allowsSecurityOptions, separator: parsing.argumentsSeparator,
                          allowedOptions: parsing.onlyPresets ? [] : parsing.allowedProcessingOptions)
        self.defaults = defaults
        skipProcessing = defaults.skipProcessingFormats
        maxSourcePixels = defaults.maxSourcePixels
        maxAnimationFrames = defaults.maxAnimationFrames
        maxAnimationFramePixels = defaults.maxAnimationFramePixels
        processing.maxResultDimension = defaults.maxResultDimension
        processing.autoRotate = defaults.autoRotate
        stripsColorProfile = defaults.stripsColorProfile
        keepsCopyright = defaults.keepsCopyright
        preservesHDR = defaults.preservesHDR
        autoQuality = defaults.autoQuality
        // imgproxy's client hints come first: the presets and the URL's options overwrite them.
        if let dpr = clientHints.dpr { processing.devicePixelRatio = dpr }
        if let width = clientHints.width { processing.width = max(1, Int((Double(width) / (clientHints.dpr ?? 1)).rounded())) }
        var expanding: [String] = []
        if let defaults = presets["default"] {
            expanding = ["default"]
            for segment in defaults { try apply(segment, rules, expanding: &expanding) }
            expanding = []
        }
        for segment in path.optionSegments {
            try apply(segment, rules, expanding: &expanding)
        }
        if let text = path.extensionText, !raw { try setFormat(named: text, option: "the extension") }
        processing.watermark?.opacity *= defaults.watermarkOpacity
        if expires > 0 && Double(expires) < now.timeIntervalSince1970 { throw Expired() }
    }

    /// An `expires` time that has passed (answered 404, as imgproxy answers it).
    struct Expired: Error, Equatable {}

    private mutating func apply(_ segment: String, _ rules: Rules, expanding: inout [String]) throws {
        var arguments = segment.split(separator: rules.separator, omittingEmptySubsequences: false).map(String.init)
        let name = arguments.removeFirst()
        if expanding.isEmpty, !rules.allowedOptions.isEmpty, !rules.allowedOptions.contains(name) {
            throw Forbidden(reason: "\(name): the processing option is not allowed on this server")
        }
        let (presets, allowsSecurityOptions) = (rules.presets, rules.allowsSecurityOptions)
        var reader = ArgumentReader(option: name, arguments: arguments)
        switch name {
        case "resize", "rs":
            try reader.limit(8)
            if let type = try reader.resizingType(0) { processing.resizingType = type }
            try applySize(&reader, from: 1)
        case "size", "s":
            try reader.limit(7)
            try applySize(&reader, from: 0)
        case "resizing_type", "rt":
            try reader.limit(1)
            guard let type = try reader.resizingType(0) else { throw Invalid(reason: "\(name): needs a resizing type") }
            processing.resizingType = type
        case "width", "w": try reader.limit(1); processing.width = try reader.requiredLength(0)
        case "height", "h": try reader.limit(1); processing.height = try reader.requiredLength(0)
        case "min-width", "mw": try reader.limit(1); processing.minWidth = try reader.requiredLength(0)
        case "min-height", "mh": try reader.limit(1); processing.minHeight = try reader.requiredLength(0)
        case "zoom", "z":
            try reader.limit(2)
            let x = try reader.positive(0, upTo: ArgumentReader.maxZoom, required: true)!
            processing.zoomX = x
            processing.zoomY = try reader.positive(1, upTo: ArgumentReader.maxZoom, required: false) ?? x
        case "dpr":
            try reader.limit(1)
            processing.devicePixelRatio = try reader.positive(0, upTo: ArgumentReader.maxDevicePixelRatio, required: true)!
        case "enlarge", "el": try reader.limit(1); processing.enlarge = reader.boolean(0) ?? processing.enlarge
        case "extend", "ex":
            processing.extend = try reader.canvasExtension(current: processing.extend)
        case "extend_aspect_ratio", "extend_ar", "exar":
            processing.extendAspectRatio = try reader.canvasExtension(current: processing.extendAspectRatio)
        case "gravity", "g":
            processing.gravity = try reader.gravity(from: 0, current: processing.gravity, allowsSmart: true)
        case "crop", "c":
            try reader.limit(5)
            guard let width = try reader.number(0, atLeast: 0) else { throw Invalid(reason: "\(name): needs a width") }
            let height = try reader.number(1, atLeast: 0) ?? 0
            var crop = ProcessingOptions.Crop(width: width, height: height)
            if reader.has(2) { crop.gravity = try reader.gravity(from: 2, current: Gravity(), allowsSmart: true) }
            processing.crop = crop
        case "trim", "t":
            try reader.limit(4)
            guard let threshold = try reader.number(0) else { processing.trim = nil; return }
            var trim = ProcessingOptions.Trim(threshold: threshold)
            trim.color = try reader.color(1)
            trim.equalHorizontal = reader.boolean(2) ?? false
            trim.equalVertical = reader.boolean(3) ?? false
            processing.trim = trim
        case "padding", "pd":
            try reader.limit(4)
            var padding = processing.padding
            if let top = try reader.length(0, upTo: ArgumentReader.maxPadding) {
                padding.top = top
                padding.right = top
                padding.bottom = top
                padding.left = top
            }
            if let right = try reader.length(1, upTo: ArgumentReader.maxPadding) { padding.right = right; padding.left = right }
            if let bottom = try reader.length(2, upTo: ArgumentReader.maxPadding) { padding.bottom = bottom }
            if let left = try reader.length(3, upTo: ArgumentReader.maxPadding) { padding.left = left }
            processing.padding = padding
        case "auto_rotate", "ar": try reader.limit(1); processing.autoRotate = reader.boolean(0) ?? processing.autoRotate
        case "rotate", "rot":
            try reader.limit(1)
            guard let angle = try reader.integer(0), angle % 90 == 0 else {
                throw Invalid(reason: "\(name): the angle must be a multiple of 90")
            }
            processing.rotation = ((angle % 360) + 360) % 360
        case "flip", "fl":
            try reader.limit(2)
            processing.flipsHorizontally = reader.boolean(0) ?? processing.flipsHorizontally
            processing.flipsVertically = reader.boolean(1) ?? processing.flipsVertically
        case "background", "bg":
            processing.background = try reader.background()
        case "blur", "bl":
            try reader.limit(1)
            processing.blurSigma = try reader.number(0, atLeast: 0, upTo: ArgumentReader.maxSigma, required: true)!
        case "sharpen", "sh":
            try reader.limit(1)
            processing.sharpenSigma = try reader.number(0, atLeast: 0, upTo: ArgumentReader.maxSigma, required: true)!
        case "pixelate", "pix":
            try reader.limit(1)
            processing.pixelateSize = try reader.requiredLength(0)
        case "watermark", "wm":
            try reader.limit(7)   // imgproxy reads 5; the 2 after them are its paid edition's
            guard let opacity = try reader.number(0, atLeast: 0, upTo: 1) else { throw Invalid(reason: "\(name): needs an opacity 0...1") }
            var watermark = processing.watermark ?? ProcessingOptions.Watermark()
            watermark.opacity = opacity
            if reader.has(1) {
                if arguments[1] == "re" {
                    watermark.replicates = true
                    watermark.position.kind = .center
                } else {
                    guard let kind = Gravity.Kind(rawValue: arguments[1]), kind != .smart, kind != .focusPoint else {
                        throw Invalid(reason: "\(name): unknown position \(arguments[1]) (ce, no, so, ea, we, noea, nowe, soea, sowe, re)")
                    }
                    watermark.replicates = false
                    watermark.position.kind = kind
                }
            }
            let bound = Double(ArgumentReader.maxLength)
            if let x = try reader.number(2, atLeast: -bound, upTo: bound) { watermark.position.x = x }
            if let y = try reader.number(3, atLeast: -bound, upTo: bound) { watermark.position.y = y }
            if reader.has(4) {
                let scale = try reader.number(4, upTo: 1, required: true)!
                guard scale > 0 else { throw Invalid(reason: "\(name): the scale must be above 0 (and at most 1: the image's size)") }
                watermark.scale = scale
            }
            processing.watermark = watermark
        case "strip_metadata", "sm":
            try reader.limit(1)
            if reader.boolean(0) == false { throw Invalid(reason: "\(name): outputs always drop their metadata (strip_metadata:0 is not supported)") }
        case "keep_copyright", "kcr": try reader.limit(1); keepsCopyright = reader.boolean(0) ?? keepsCopyright
        case "strip_color_profile", "scp": try reader.limit(1); stripsColorProfile = reader.boolean(0) ?? stripsColorProfile
        case "preserve_hdr", "ph": try reader.limit(1); preservesHDR = reader.boolean(0) ?? preservesHDR
        case "enforce_thumbnail", "eth":
            try reader.limit(1)
            if reader.boolean(0) == true { throw Invalid(reason: "\(name): embedded thumbnails are not used yet") }
        case "quality", "q":
            try reader.limit(1)
            guard let value = try reader.integer(0), (0...100).contains(value) else { throw Invalid(reason: "\(name): must be 0 to 100") }
            quality = value == 0 ? nil : value
        case "format_quality", "fq":
            guard !arguments.isEmpty, arguments.count % 2 == 0 else { throw Invalid(reason: "\(name): needs format:quality pairs") }
            for pair in stride(from: 0, to: arguments.count, by: 2) {
                guard let format = try Self.format(named: arguments[pair], option: name) else { continue }
                guard let value = Int(arguments[pair + 1]), (0...100).contains(value) else { throw Invalid(reason: "\(name): qualities are 0 to 100") }
                formatQuality[format] = value
            }
        case "max_bytes", "mb":
            try reader.limit(1)
            maxBytes = try reader.requiredLength(0, upTo: Int(Int32.max))
        case "format", "f", "ext":
            try reader.limit(1)
            try setFormat(named: arguments.first ?? "", option: name)
        case "autoquality", "aq":
            try autoQuality.apply(reader)
        case "skip_processing", "skp":
            guard !arguments.isEmpty, !arguments.contains("") else { throw Invalid(reason: "\(name): needs format names") }
            for text in arguments { skipProcessing.formUnion(try Self.sourceFormats(named: text, option: name)) }
        case "raw": try reader.limit(1); raw = reader.boolean(0) ?? raw
        case "cachebuster", "cb": try reader.limit(1)
        case "expires", "exp":
            try reader.limit(1)
            guard let text = arguments.first, let value = Int64(text) else { throw Invalid(reason: "\(name): must be a Unix time") }
            expires = value
        case "filename", "fn":
            try reader.limit(2)
            let text = arguments.first ?? ""
            if reader.boolean(1) == true {
                guard let data = ProcessingPath.base64URLDecoded(text), let decoded = String(data: data, encoding: .utf8) else {
                    throw Invalid(reason: "\(name): the name is not base64url")
                }
                filename = decoded
            } else {
                filename = text
            }
        case "return_attachment", "att": try reader.limit(1); returnsAttachment = reader.boolean(0) ?? returnsAttachment
        case "preset", "pr":
            for preset in arguments {
                guard let segments = presets[preset] else { throw Invalid(reason: "\(name): unknown preset \(preset)") }
                guard !expanding.contains(preset) else {
                    throw Invalid(reason: "\(name): the preset \(preset) includes itself (\((expanding + [preset]).joined(separator: " → ")))")
                }
                expanding.append(preset)
                for inner in segments {
                    try apply(inner, rules, expanding: &expanding)
                }
                expanding.removeLast()
            }
        case "max_src_resolution", "msr", "max_src_file_size", "msfs", "max_animation_frames", "maf",
             "max_animation_frame_resolution", "mafr", "max_result_dimension", "mrd":
            guard allowsSecurityOptions else { throw Forbidden(reason: "\(name): security options are not allowed on this server") }
            try reader.limit(1)
            try applySecurity(name, &reader)
        case "webimage", "wi":
            let text = arguments.joined(separator: String(rules.separator))
            do {
                transformer = try PipelineTransformer(parsing: text)
            } catch {
                throw Invalid(reason: "webimage: not a WebImage transformer text: \(text)")
            }
        default:
            throw Invalid(reason: "unknown processing option: \(name)")
        }
    }

    private mutating func applySize(_ reader: inout ArgumentReader, from index: Int) throws {
        if let width = try reader.length(index) { processing.width = width }
        if let height = try reader.length(index + 1) { processing.height = height }
        if let enlarge = reader.boolean(index + 2) { processing.enlarge = enlarge }
        if reader.has(index + 3) {
            processing.extend = try reader.canvasExtension(current: processing.extend, from: index + 3)
        }
    }

    private mutating func applySecurity(_ name: String, _ reader: inout ArgumentReader) throws {
        switch name {
        case "max_src_resolution", "msr":
            let megapixels = try reader.number(0, atLeast: 0, upTo: 1_000_000, required: true)!
            maxSourcePixels = Int(megapixels * 1_000_000)
        case "max_src_file_size", "msfs": maxSourceBytes = try reader.requiredLength(0, upTo: Int(Int32.max))
        case "max_animation_frames", "maf":
            let frames = try reader.requiredLength(0, upTo: 100_000)
            guard frames > 0 else { throw Invalid(reason: "\(name): must be at least 1") }
            maxAnimationFrames = frames
        case "max_animation_frame_resolution", "mafr":
            let megapixels = try reader.number(0, atLeast: 0, upTo: 1_000_000, required: true)!
            maxAnimationFramePixels = Int(megapixels * 1_000_000)
        default: processing.maxResultDimension = max(0, try reader.integer(0) ?? 0)
        }
    }

    /// The output format named `name`, or imgproxy Pro's `best`.
    private mutating func setFormat(named name: String, option: String) throws(Invalid) {
        if name == "best" {
            (format, asksBestFormat) = (nil, true)
        } else {
            (format, asksBestFormat) = (try Self.format(named: name, option: option), false)
        }
    }

    /// The source formats an imgproxy format name stands for in `skip_processing`, from the format
    /// registry (`heic` is HEIF's too: imgproxy has one type for both).
    static func sourceFormats(named name: String, option: String) throws(Invalid) -> Set<ImageFormat> {
        guard let format = ImageFormat(named: name), format != .pdf else { throw Invalid(reason: "\(option): unknown format \(name)") }
        return format == .heic ? [.heic, .heif] : [format]
    }

    /// An output format named by its registry name or alias (`jpeg`, `jpg`, `png`, `webp`, `avif`, `gif`,
    /// `jxl`, `heic`, `tiff`/`tif`, `bmp`, `ico`, `svg`). An unknown name is refused, and so is `best`
    /// here (a request takes it: ``asksBestFormat``); whether the server's coders write the format is the handler's check
    /// (``checkWritable(by:)``).
    static func format(named name: String, option: String) throws(Invalid) -> ImageFormat? {
        if name == "best" { throw Invalid(reason: "\(option): best is a choice among formats, not one format") }
        guard let format = ImageFormat(named: name), format != .pdf else { throw Invalid(reason: "\(option): unknown format \(name)") }
        return format
    }

    /// Refuses a named output format `coders` can neither write nor pass through (HEIC where libheif
    /// has no encoder; SVG without an SVG coder). An SVG named for a raster source is the manager's
    /// refusal (422, as imgproxy's), once the source is known.
    /// - Throws: ``Invalid`` naming the format.
    func checkWritable(by coders: CoderRegistry) throws(Invalid) {
        guard let format, !coders.canEncode(format), !coders.canPassThrough(format) else { return }
        throw Invalid(reason: "format: WebImage cannot write \(format)")
    }
}
