import Foundation
import WebImage

/// What a parsed imgproxy path asks ``WebImageManager/loadVariant(url:format:encoding:options:context:)``
/// for: the format (or the `Accept` choice), the encode options, and the context (thumbnail size for
/// shrink-on-load, and transformers).
///
/// - `fit` (the default): fitted inside width × height (0 = any), never enlarged unless `enlarge`,
///   decoded small (JPEG DCT scaling, WebP scaling).
/// - `fill`, `fill-down`, `auto`: cover width × height and crop the overflow evenly
///   (`ResizingTransformer(.aspectFill)`); with one side 0 they behave as `fit`.
/// - `force`: exactly width × height, the aspect ratio not kept.
/// - then `blur`, then the `webimage` transformer text, in that order.
struct VariantParameters {
    var format: VariantFormat
    var encoding: EncodeOptions
    var context = WebImageContext()

    /// Quality when the URL names none (imgproxy's default).
    static let defaultQuality = 80
    /// AVIF's effort, as imgproxy's default (`IMGPROXY_AVIF_SPEED` 9): libavif speed 9 of 10–0, about
    /// twice as fast as libavif's own default (6) for files a few per cent larger.
    static let avifEffort = 0.1
    /// The side a 0 (any) dimension fits inside.
    static let unbounded = 1 << 20

    init(path: ProcessingPath, accept: String?, coders: CoderRegistry = .shared) {
        format = path.format.map { .exactly($0) } ?? .automatic(accept: accept)
        encoding = EncodeOptions(compressionQuality: Double(path.quality ?? Self.defaultQuality) / 100)
        // AVIF asked for, or what the Accept header picks (a modern format's choice does not depend on the source).
        let avif = path.format.map { $0 == .avif }
            ?? (ImageFormat.negotiated(accept: accept, isAnimated: false, hasAlpha: false, coders: coders) == .avif)
        if avif { encoding.compressionEffort = Self.avifEffort }
        var transformers: [any ImageTransformer] = []
        let both = path.width > 0 && path.height > 0
        let size = PixelSize(width: path.width > 0 ? path.width : Self.unbounded, height: path.height > 0 ? path.height : Self.unbounded)
        switch path.resizingType {
        case .fill where both, .fillDown where both, .auto where both:
            transformers.append(ResizingTransformer(size: size, scaleMode: .aspectFill))
        case .force where both:
            transformers.append(ResizingTransformer(size: size, scaleMode: .fill))
        default:
            if path.width > 0 || path.height > 0 {
                context.thumbnailPixelSize = size
                if path.enlarge && both { transformers.append(ResizingTransformer(size: size, scaleMode: .aspectFit)) }
            }
        }
        if let sigma = path.blurSigma { transformers.append(BlurTransformer(radius: sigma)) }
        if let text = path.transformerText, let pipeline = try? PipelineTransformer(parsing: text) { transformers.append(pipeline) }
        if !transformers.isEmpty {
            context.transformer = transformers.count == 1 ? transformers[0] : PipelineTransformer(transformers)
        }
    }
}
