import Foundation
import WebImage

/// What a parsed request asks ``WebImageManager/loadVariant(url:format:encoding:options:context:)``
/// for: the format (``FormatPolicy``: enforced, named, the `Accept` choice or preferred), the encode options, the load
/// options, and the context: the ``ProcessingTransformer`` of the request's geometry and effects,
/// and a thumbnail size for shrink-on-load when the geometry allows one (no crop, trim or minimum
/// sizes): the fitted size itself for `fit`, the smallest image covering the box for the others.
struct VariantParameters {
    var format: VariantFormat
    var encoding: EncodeOptions
    var options: WebImageOptions = []
    var context = WebImageContext()

    /// Whether the answer depends on the client's `Accept` header (it must say `Vary: Accept`).
    var variesByAccept: Bool

    /// The side a 0 (any) dimension fits inside.
    static let unbounded = 1 << 20

    /// - Parameter formats: how the format is picked from the URL's and the client's `accept`.
    init(request: ProcessingRequest, accept: String?, formats: FormatPolicy = FormatPolicy(), watermark: WatermarkImage? = nil,
         limits: ImageLimits = ImageLimits()) {
        (format, variesByAccept) = formats.format(named: request.format, asksBest: request.asksBestFormat, accept: accept)
        // The output format is decided once, by the manager once the image is known: every format's
        // quality and effort are handed on, and the encode picks its own.
        let defaults = request.defaults
        encoding = EncodeOptions(compressionQuality: Double(request.quality ?? defaults.quality) / 100)
        encoding.passesVectorSource = formats.passesVectorSource(named: request.format, skipped: request.skipProcessing,
                                                                 asksBest: request.asksBestFormat)
        // Validated when the URL or the server's settings were read.
        encoding.automaticQuality = try? request.autoQuality.automaticQuality()
        if request.quality == nil {
            for format in ProcessingRequest.qualityFormats where request.quality(for: format) != defaults.quality {
                encoding.formatQualities[format] = Double(request.quality(for: format)) / 100
            }
        }
        encoding.formatEfforts[.avif] = defaults.avifCompressionEffort
        encoding.formatEfforts[.webp] = defaults.webpCompressionEffort
        encoding.formatEfforts[.jxl] = defaults.jxlCompressionEffort
        encoding.isProgressive = defaults.jpegProgressive
        context.limits = request.limits(over: limits)
        if request.maxAnimationFrames == 1 { options.insert(.decodeFirstFrameOnly) }
        if request.maxBytes > 0 { encoding.maxFileSize = request.maxBytes }
        if !request.stripsColorProfile { options.insert(.preserveColorProfile) }
        if request.keepsCopyright { options.insert(.preserveCopyright) }
        // As imgproxy's `colorspaceToProcessing`: 16 bits only for a result format that holds them (a
        // format chosen later, from the image, narrows an image kept at 16 bits when it cannot).
        if request.preservesHDR, request.format?.descriptor?.savedBitDepths.contains(where: { $0 > 8 }) ?? true {
            options.insert(.preserveHighBitDepth)
        }
        let processing = request.processing
        var transformers: [any ImageTransformer] = []
        context.appliesOrientation = processing.autoRotate
        if !processing.isIdentity {
            transformers.append(ProcessingTransformer(options: processing, watermark: watermark, maxOutputPixelCount: limits.maxOutputPixels))
            if !defaults.disablesShrinkOnLoad, let shrink = Self.shrinkOnLoad(for: processing) {
                context.thumbnailPixelSize = shrink.size
                context.thumbnailCoversBox = shrink.covers
            }
        }
        if let pipeline = request.transformer { transformers.append(pipeline) }
        if !transformers.isEmpty {
            context.transformer = transformers.count == 1 ? transformers[0] : PipelineTransformer(transformers)
        }
    }

    /// The box the decoder may shrink into without changing the result, and whether the decode must
    /// cover it (fill, fill-down, force and auto crop or stretch to the box) rather than fit in it;
    /// `nil` when the geometry needs the full image: crop, trim and minimum sizes are in source
    /// pixels, and a device pixel ratio or zoom under 1 makes the shrunk image look smaller than the
    /// box, which imgproxy's no-enlarge rule would then compensate for differently.
    static func shrinkOnLoad(for processing: ProcessingOptions) -> (size: PixelSize, covers: Bool)? {
        guard processing.crop == nil, processing.trim == nil, processing.minWidth == 0, processing.minHeight == 0,
              processing.width > 0 || processing.height > 0, processing.autoRotate,
              processing.devicePixelRatio >= 1, processing.zoomX >= 1, processing.zoomY >= 1 else { return nil }
        let covers = processing.resizingType != .fit && processing.width > 0 && processing.height > 0
        return (box(for: processing), covers)
    }

    /// The requested size times the device pixel ratio and zoom (0: unbounded), in the decoder's
    /// orientation (before the rotation).
    private static func box(for processing: ProcessingOptions) -> PixelSize {
        func side(_ length: Int, _ zoom: Double) -> Int {
            length == 0 ? unbounded : max(1, Int((Double(length) * processing.devicePixelRatio * zoom).rounded(.up)))
        }
        let width = side(processing.width, processing.zoomX), height = side(processing.height, processing.zoomY)
        return processing.rotation % 180 == 0 ? PixelSize(width: width, height: height) : PixelSize(width: height, height: width)
    }
}
