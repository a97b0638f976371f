import Foundation
import WebImage

/// What a parsed request asks ``WebImageManager/loadVariant(url:format:encoding:options:context:)``
/// for: the format (named, the source's own, or the `Accept` choice), the encode options, the load
/// options, and the context: the ``ProcessingTransformer`` of the request's geometry and effects,
/// and a thumbnail size for shrink-on-load when the geometry allows one (a fit without crop, trim or
/// minimum sizes: the decoder's scaled result is then the fitted size itself).
struct VariantParameters {
    var format: VariantFormat
    var encoding: EncodeOptions
    var options: WebImageOptions = []
    var context = WebImageContext()

    /// AVIF's effort, as imgproxy's default (`IMGPROXY_AVIF_SPEED` 9): libavif speed 9 of 10–0, about
    /// twice as fast as libavif's own default (6) for files a few per cent larger.
    static let avifEffort = 0.1
    /// The side a 0 (any) dimension fits inside.
    static let unbounded = 1 << 20

    /// - Parameters:
    ///   - negotiates: whether a request naming no format gets the `Accept` choice (AVIF, WebP) instead
    ///     of the source's own format.
    init(request: ProcessingRequest, accept: String?, negotiates: Bool, coders: CoderRegistry = .shared,
         watermark: WatermarkImage? = nil, maxOutputPixels: Int = DecodeOptions.defaultPixelCountLimit) {
        let named = request.format
        format = named.map { .exactly($0) } ?? (negotiates ? .automatic(accept: accept) : .source)
        var predicted = named
        if predicted == nil && negotiates {
            let modern = ImageFormat.negotiated(accept: accept, isAnimated: false, hasAlpha: false, coders: coders)
            predicted = modern == .avif || modern == .webp ? modern : nil
        }
        let quality = predicted.map { request.quality(for: $0) } ?? request.quality ?? ProcessingRequest.defaultQuality
        encoding = EncodeOptions(compressionQuality: Double(quality) / 100)
        if predicted == .avif { encoding.compressionEffort = Self.avifEffort }
        if request.maxBytes > 0 { encoding.maxFileSize = request.maxBytes }
        if !request.stripsColorProfile { options.insert(.preserveColorProfile) }
        if request.keepsCopyright { options.insert(.preserveCopyright) }
        let processing = request.processing
        var transformers: [any ImageTransformer] = []
        context.appliesOrientation = processing.autoRotate
        if !processing.isIdentity {
            transformers.append(ProcessingTransformer(options: processing, watermark: watermark, maxOutputPixelCount: maxOutputPixels))
            context.thumbnailPixelSize = Self.shrinkOnLoadSize(for: processing)
        }
        if let pipeline = request.transformer { transformers.append(pipeline) }
        if !transformers.isEmpty {
            context.transformer = transformers.count == 1 ? transformers[0] : PipelineTransformer(transformers)
        }
    }

    /// The box the decoder may shrink into without changing the result, or `nil` when the geometry
    /// needs the full image (fill and force crop or stretch against the source's size; crop, trim and
    /// minimum sizes are in source pixels).
    static func shrinkOnLoadSize(for processing: ProcessingOptions) -> PixelSize? {
        guard processing.resizingType == .fit, processing.crop == nil, processing.trim == nil,
              processing.minWidth == 0, processing.minHeight == 0, processing.width > 0 || processing.height > 0,
              processing.autoRotate else { return nil }
        func side(_ length: Int, _ zoom: Double) -> Int {
            length == 0 ? unbounded : max(1, Int((Double(length) * processing.devicePixelRatio * zoom).rounded(.up)))
        }
        let width = side(processing.width, processing.zoomX), height = side(processing.height, processing.zoomY)
        return processing.rotation % 180 == 0 ? PixelSize(width: width, height: height) : PixelSize(width: height, height: width)
    }
}
