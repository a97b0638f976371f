/// Runs ``ProcessingOptions`` on a decoded image, in imgproxy's order: trim, orientation, rotate
/// and flip, crop, resize, the resizing type's crop (by gravity, smart or focus point), blur,
/// sharpen, pixelate, extend, extend to the aspect ratio, padding, flatten onto the background,
/// watermark.
///
/// Sizes are imgproxy's to the pixel (``ProcessingPlan``): its resizing types, enlarge and device
/// pixel ratio rules, rounding and result-dimension limit. An animation gets the same geometry on
/// every frame (the smart crop is found on the first); trim is skipped on animations, as imgproxy
/// skips it. The planned output is checked against ``maxOutputPixelCount`` before anything is
/// allocated.
public struct ProcessingTransformer: ImageTransformer {
    /// What to do.
    public let options: ProcessingOptions
    /// The picture ``ProcessingOptions/watermark`` lays over results; `nil`: a watermark option
    /// changes nothing (as imgproxy without a configured watermark).
    public let watermark: WatermarkImage?
    /// The largest output (and intermediate image) allowed, in pixels; default
    /// ``DecodeOptions/defaultPixelCountLimit`` (100 megapixels).
    public let maxOutputPixelCount: Int

    /// Creates a transformer running `options` with `watermark` (default none), refusing outputs
    /// over `maxOutputPixelCount` pixels (default 100 megapixels).
    public init(options: ProcessingOptions, watermark: WatermarkImage? = nil, maxOutputPixelCount: Int = DecodeOptions.defaultPixelCountLimit) {
        self.options = options
        self.watermark = options.watermark == nil ? nil : watermark
        self.maxOutputPixelCount = maxOutputPixelCount
    }

    /// `Processing(<options key>)`, such as `Processing(rs:fill:300:200/g:sm)`, with the watermark
    /// picture's identity when one is laid: `Processing(wm:0.5:ce,3f2a...)`.
    public var key: String { "Processing(\(options.key)" + (watermark.map { ",\($0.identity)" } ?? "") + ")" }

    /// Returns the processed image (every frame of an animated one).
    /// - Throws: ``ImageTransformError/invalidParameter(_:)`` when the result would exceed
    ///   ``maxOutputPixelCount``; ``ImageTransformError/insufficientMemory(byteCount:)``.
    public func transform(_ image: Image, forKey key: String) throws -> Image {
        var source = options.autoRotate ? image : image.ignoringOrientation()
        if source.pixelFormat.isHighBitDepth && !keepsHighBitDepth { source = try source.reducedToEightBits() }
        var first = try source.frames[0].image.oriented()
        var trimRect: PixelRect?
        if let trim = options.trim, !source.isAnimated {
            trimRect = first.trimRect(trim)
            if let trimRect { first = try CroppingTransformer(rect: trimRect).transform(first, forKey: "") }
        }
        let turned = try turn(first)
        let plan = ProcessingPlan(source: first.size, options: options)
        try check(plan)
        let cropRect = try userCropRect(in: turned, plan: plan)
        let scaledSize = PixelSize(width: max(1, ProcessingNumber.scale(cropRect.width, plan.widthScale)),
                                   height: max(1, ProcessingNumber.scale(cropRect.height, plan.heightScale)))
        let firstScaled = try scale(turned, region: cropRect, to: scaledSize)
        let resultRect = try resultCropRect(in: firstScaled, plan: plan)
        let firstResult = try finish(firstScaled, resultRect: resultRect, plan: plan)
        guard source.isAnimated else { return firstResult.keepingMetadata(of: image) }
        let later = try source.frames.dropFirst().map { frame in
            var upright = try frame.image.oriented()
            if let trimRect { upright = try CroppingTransformer(rect: trimRect).transform(upright, forKey: "") }
            let scaled = try scale(try turn(upright), region: cropRect, to: scaledSize)
            return ImageFrame(image: try finish(scaled, resultRect: resultRect, plan: plan), duration: frame.duration,
                              storedDuration: frame.storedDuration)
        }
        return firstResult.replacingFrames(first: firstResult, later: later).keepingMetadata(of: image)
    }

    /// `true`: a 16-bit image stays 16-bit through the geometry (orientation, rotation, flips,
    /// crops by position, resize) and the watermark; with any other step (trim, smart gravity, blur,
    /// sharpen, pixelate, extend, padding, background) it is narrowed to 8 bits first.
    public var acceptsHighBitDepth: Bool { true }

    /// Whether every step asked for works on 16-bit samples (``acceptsHighBitDepth``).
    private var keepsHighBitDepth: Bool {
        options.trim == nil && options.gravity.kind != .smart && options.crop?.gravity?.kind != .smart
            && options.blurSigma <= 0 && options.sharpenSigma <= 0 && options.pixelateSize <= 1
            && options.extend == nil && options.extendAspectRatio == nil && options.background == nil
            && options.padding.isZero
    }

    /// The resized image and the result, from imgproxy's plan for an upright `source`-sized image;
    /// empty with `trim` (its rectangle is found in the pixels).
    public func plannedSizes(for source: PixelSize) -> [PixelSize] {
        guard options.trim == nil, source.width > 0, source.height > 0 else { return [] }
        let plan = ProcessingPlan(source: source, options: options)
        return [PixelSize(width: plan.scaledWidth, height: plan.scaledHeight), plan.outputSize(options: options)]
    }

    /// Refuses a plan whose images would be larger than the limit, before any allocation.
    private func check(_ plan: ProcessingPlan) throws {
        let output = plan.outputSize(options: options)
        for size in [output, PixelSize(width: plan.scaledWidth, height: plan.scaledHeight)] {
            let pixels = size.width.multipliedReportingOverflow(by: size.height)
            if pixels.overflow || pixels.partialValue > maxOutputPixelCount || size.width <= 0 || size.height <= 0 {
                throw ImageTransformError.invalidParameter(
                    "the result would be \(size.width)x\(size.height) pixels, over the limit of \(maxOutputPixelCount)")
            }
        }
    }

    /// The user rotation and flips.
    private func turn(_ image: Image) throws -> Image {
        var result = image
        switch ((options.rotation % 360) + 360) % 360 {
        case 90: result = try result.moved(as: .right)
        case 180: result = try result.moved(as: .down)
        case 270: result = try result.moved(as: .left)
        default: break
        }
        if options.flipsHorizontally { result = try result.moved(as: .upMirrored) }
        if options.flipsVertically { result = try result.moved(as: .downMirrored) }
        return result
    }

    /// The user crop (before the resize), placed by its gravity (or the options' gravity) with
    /// offsets in source pixels; the whole image when there is none.
    private func userCropRect(in image: Image, plan: ProcessingPlan) throws -> PixelRect {
        let whole = PixelRect(x: 0, y: 0, width: image.width, height: image.height)
        let size = PixelSize(width: min(ProcessingNumber.minNonZero(plan.cropWidth, image.width), image.width),
                             height: min(ProcessingNumber.minNonZero(plan.cropHeight, image.height), image.height))
        guard size != image.size else { return whole }
        let gravity = options.crop?.gravity ?? options.gravity
        return try place(size, in: image, gravity: gravity, pixelScale: 1)
    }

    /// The resizing type's crop after the resize, placed by the options' gravity with pixel offsets
    /// times the device pixel ratio.
    private func resultCropRect(in image: Image, plan: ProcessingPlan) throws -> PixelRect? {
        let size = PixelSize(width: min(ProcessingNumber.minNonZero(plan.resultCropWidth, image.width), image.width),
                             height: min(ProcessingNumber.minNonZero(plan.resultCropHeight, image.height), image.height))
        guard size != image.size else { return nil }
        return try place(size, in: image, gravity: options.gravity, pixelScale: plan.pixelScale)
    }

    private func place(_ size: PixelSize, in image: Image, gravity: Gravity, pixelScale: Double) throws -> PixelRect {
        let origin = gravity.kind == .smart
            ? try SmartCrop.origin(of: size, in: image)
            : gravity.position(of: size, in: image.size, pixelScale: pixelScale)
        return PixelRect(x: origin.x, y: origin.y, width: size.width, height: size.height)
    }

    private func scale(_ image: Image, region: PixelRect, to size: PixelSize) throws -> Image {
        if region.size == size {
            return region.size == image.size ? image : try CroppingTransformer(rect: region).transform(image, forKey: "")
        }
        do throws(ImageCodingError) {
            return try Resampler.resample(image, region: region, to: size)
        } catch {
            throw TransformSupport.transformError(error)
        }
    }

    /// The steps after the resize: result crop, filters, extension, padding, background.
    private func finish(_ scaled: Image, resultRect: PixelRect?, plan: ProcessingPlan) throws -> Image {
        var image = scaled
        if let resultRect { image = try CroppingTransformer(rect: resultRect).transform(image, forKey: "") }
        if options.blurSigma > 0 { image = try BlurTransformer(radius: options.blurSigma).transform(image, forKey: "") }
        if options.sharpenSigma > 0 { image = try image.sharpened(sigma: options.sharpenSigma) }
        if options.pixelateSize > 1 { image = try image.pixelated(blockSize: options.pixelateSize) }
        if let extend = options.extend, plan.targetWidth > image.width || plan.targetHeight > image.height {
            let canvas = PixelSize(width: max(plan.targetWidth, image.width), height: max(plan.targetHeight, image.height))
            image = try extended(image, to: canvas, gravity: extend.gravity, plan: plan)
        }
        if let aspect = options.extendAspectRatio, plan.aspectWidth > 0, plan.aspectHeight > 0,
           plan.aspectWidth > image.width || plan.aspectHeight > image.height {
            let canvas = PixelSize(width: max(plan.aspectWidth, image.width), height: max(plan.aspectHeight, image.height))
            image = try extended(image, to: canvas, gravity: aspect.gravity, plan: plan)
        }
        if plan.padTop + plan.padRight + plan.padBottom + plan.padLeft > 0 {
            let canvas = PixelSize(width: image.width + plan.padLeft + plan.padRight, height: image.height + plan.padTop + plan.padBottom)
            image = try image.embedded(in: canvas, at: (plan.padLeft, plan.padTop), background: options.background)
        }
        if let background = options.background { image = try image.flattened(onto: background) }
        if let placement = options.watermark, let watermark, placement.opacity > 0 {
            let overlay = try watermark.overlay(for: image.size, placement: placement, pixelScale: plan.pixelScale)
            image = try image.composited(with: overlay.image, at: (overlay.x, overlay.y), opacity: placement.opacity)
        }
        return image
    }

    private func extended(_ image: Image, to canvas: PixelSize, gravity: Gravity, plan: ProcessingPlan) throws -> Image {
        let origin = gravity.position(of: image.size, in: canvas, pixelScale: plan.pixelScale)
        return try image.embedded(in: canvas, at: origin, background: options.background)
    }
}

extension Image {
    /// This image with its orientation relabelled `.up` (the stored pixels taken as upright).
    func ignoringOrientation() -> Image {
        guard orientation != .up else { return self }
        return Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow,
                     format: format, scale: scale, orientation: .up, laterFrames: laterFrames,
                     firstFrameDuration: firstFrameDuration, firstFrameStoredDuration: firstFrameStoredDuration, loopCount: loopCount)
    }
}
