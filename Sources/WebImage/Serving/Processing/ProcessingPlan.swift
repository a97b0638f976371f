/// The sizes one run of ``ProcessingOptions`` works with, computed before any pixel is touched, the
/// way imgproxy's `CalcParams` computes them (its scale, enlarge and device-pixel-ratio rules, result
/// crop, aspect-ratio extension and result-dimension limit; see `imgproxy/processing/prepare.go`).
///
/// Every size is in the output's orientation: the source size is taken after the EXIF orientation
/// and the rotation. Lengths of 0 mean "not set".
struct ProcessingPlan: Equatable {
    /// The source, upright and rotated.
    var sourceSize: PixelSize
    /// The user crop before the resize (0: the whole side).
    var cropWidth = 0, cropHeight = 0
    /// The resize factors and the device pixel ratio left after the enlarge rules.
    var widthScale = 1.0, heightScale = 1.0, pixelScale = 1.0
    /// The box in output pixels (0: not set).
    var targetWidth = 0, targetHeight = 0
    /// The image after the resize.
    var scaledWidth = 0, scaledHeight = 0
    /// The crop after the resize (the resizing type's; 0: none).
    var resultCropWidth = 0, resultCropHeight = 0
    /// The canvas of `extend_aspect_ratio` (0: none).
    var aspectWidth = 0, aspectHeight = 0
    /// Padding in output pixels.
    var padTop = 0, padRight = 0, padBottom = 0, padLeft = 0

    /// The plan for a `source`-sized image (upright, before the rotation of `options`).
    init(source: PixelSize, options: ProcessingOptions) {
        let turned = options.rotation % 180 != 0
        sourceSize = turned ? PixelSize(width: source.height, height: source.width) : source
        if let crop = options.crop {
            cropWidth = Self.cropLength(sourceSize.width, crop.width)
            cropHeight = Self.cropLength(sourceSize.height, crop.height)
        }
        let toScale = PixelSize(width: ProcessingNumber.minNonZero(cropWidth, sourceSize.width),
                                height: ProcessingNumber.minNonZero(cropHeight, sourceSize.height))
        computeScale(toScale, options: options)
        computeSizes(toScale, options: options)
        limitScale(toScale, options: options)
        padTop = ProcessingNumber.scaleEven(options.padding.top, pixelScale)
        padRight = ProcessingNumber.scaleEven(options.padding.right, pixelScale)
        padBottom = ProcessingNumber.scaleEven(options.padding.bottom, pixelScale)
        padLeft = ProcessingNumber.scaleEven(options.padding.left, pixelScale)
    }

    /// A crop side: 0 → not set; 1 or more → whole pixels (truncated, at most the side); under 1 →
    /// that fraction of the side, at least 1 pixel.
    static func cropLength(_ side: Int, _ value: Double) -> Int {
        guard value > 0, value.isFinite else { return 0 }
        if value >= 1 { return min(ProcessingNumber.clampedInt(value.rounded(.towardZero)), side) }
        return max(1, ProcessingNumber.scale(side, value))
    }

    /// The size of the image after the resize and the result crop, before extension and padding.
    var imageSize: PixelSize {
        PixelSize(width: ProcessingNumber.minNonZero(resultCropWidth, scaledWidth),
                  height: ProcessingNumber.minNonZero(resultCropHeight, scaledHeight))
    }

    /// The size of the output: the image, extended and padded.
    func outputSize(options: ProcessingOptions) -> PixelSize {
        var size = imageSize
        if options.extend != nil {
            if targetWidth > size.width { size.width = targetWidth }
            if targetHeight > size.height { size.height = targetHeight }
        }
        if options.extendAspectRatio != nil, aspectWidth > 0, aspectHeight > 0 {
            size.width = max(size.width, aspectWidth)
            size.height = max(size.height, aspectHeight)
        }
        return PixelSize(width: size.width + padLeft + padRight, height: size.height + padTop + padBottom)
    }

    private mutating func computeScale(_ toScale: PixelSize, options: ProcessingOptions) {
        let sourceWidth = Double(toScale.width), sourceHeight = Double(toScale.height)
        let boxWidth = options.width == 0 ? sourceWidth : Double(options.width)
        let boxHeight = options.height == 0 ? sourceHeight : Double(options.height)
        var widthShrink = boxWidth == sourceWidth ? 1 : sourceWidth / boxWidth
        var heightShrink = boxHeight == sourceHeight ? 1 : sourceHeight / boxHeight
        if widthShrink != 1 || heightShrink != 1 {
            var type = options.resizingType
            if type == .auto {
                let sameShape = (sourceWidth - sourceHeight >= 0) == (boxWidth - boxHeight >= 0)
                type = sameShape ? .fill : .fit
            }
            if options.width == 0 && type != .force {
                widthShrink = heightShrink
            } else if options.height == 0 && type != .force {
                heightShrink = widthShrink
            } else if type == .fit {
                widthShrink = max(widthShrink, heightShrink)
                heightShrink = widthShrink
            } else if type == .fill || type == .fillDown {
                widthShrink = min(widthShrink, heightShrink)
                heightShrink = widthShrink
            }
        }
        widthShrink /= options.zoomX
        heightShrink /= options.zoomY
        var ratio = options.devicePixelRatio
        if !options.enlarge {
            let smallest = min(widthShrink, heightShrink)
            if smallest < 1 {
                widthShrink /= smallest
                heightShrink /= smallest
                if options.extend == nil { ratio /= smallest }
            }
            ratio = min(ratio, min(widthShrink, heightShrink))
        }
        if options.minWidth > 0, sourceWidth / Double(options.minWidth) < widthShrink {
            let shrink = sourceWidth / Double(options.minWidth)
            heightShrink /= widthShrink / shrink
            widthShrink = shrink
        }
        if options.minHeight > 0, sourceHeight / Double(options.minHeight) < heightShrink {
            let shrink = sourceHeight / Double(options.minHeight)
            widthShrink /= heightShrink / shrink
            heightShrink = shrink
        }
        widthShrink = min(widthShrink / ratio, sourceWidth)
        heightShrink = min(heightShrink / ratio, sourceHeight)
        widthScale = 1 / widthShrink
        heightScale = 1 / heightShrink
        pixelScale = ratio
    }

    private mutating func computeSizes(_ toScale: PixelSize, options: ProcessingOptions) {
        targetWidth = ProcessingNumber.scale(options.width, pixelScale * options.zoomX)
        targetHeight = ProcessingNumber.scale(options.height, pixelScale * options.zoomY)
        scaledWidth = ProcessingNumber.scale(toScale.width, widthScale)
        scaledHeight = ProcessingNumber.scale(toScale.height, heightScale)
        resultCropWidth = targetWidth
        resultCropHeight = targetHeight
        if options.resizingType == .fillDown && !options.enlarge {
            let widthRatio = targetWidth == 0 ? 0 : Double(targetWidth) / Double(scaledWidth)
            let heightRatio = targetHeight == 0 ? 0 : Double(targetHeight) / Double(scaledHeight)
            if widthRatio > heightRatio && widthRatio > 1 {
                resultCropWidth = scaledWidth
                resultCropHeight = ProcessingNumber.scale(scaledWidth, Double(targetHeight) / Double(targetWidth))
            } else if heightRatio > widthRatio && heightRatio > 1 {
                resultCropHeight = scaledHeight
                resultCropWidth = ProcessingNumber.scale(scaledHeight, Double(targetWidth) / Double(targetHeight))
            }
        }
        aspectWidth = 0
        aspectHeight = 0
        if options.extendAspectRatio != nil && targetWidth > 0 && targetHeight > 0 {
            let outWidth = ProcessingNumber.minNonZero(scaledWidth, resultCropWidth)
            let outHeight = ProcessingNumber.minNonZero(scaledHeight, resultCropHeight)
            let widthRatio = Double(targetWidth) / Double(outWidth), heightRatio = Double(targetHeight) / Double(outHeight)
            if heightRatio > widthRatio {
                aspectWidth = outWidth
                aspectHeight = ProcessingNumber.scale(outWidth, Double(targetHeight) / Double(targetWidth))
            } else if widthRatio > heightRatio {
                aspectHeight = outHeight
                aspectWidth = ProcessingNumber.scale(outHeight, Double(targetWidth) / Double(targetHeight))
            }
        }
    }

    /// `max_result_dimension`: one factor over the whole output (extension and padding included),
    /// applied once.
    private mutating func limitScale(_ toScale: PixelSize, options: ProcessingOptions) {
        let limit = options.maxResultDimension
        guard limit > 0 else { return }
        var outWidth = ProcessingNumber.minNonZero(scaledWidth, resultCropWidth)
        var outHeight = ProcessingNumber.minNonZero(scaledHeight, resultCropHeight)
        if options.extend != nil {
            outWidth = max(outWidth, targetWidth)
            outHeight = max(outHeight, targetHeight)
        } else if options.extendAspectRatio != nil {
            outWidth = max(outWidth, aspectWidth)
            outHeight = max(outHeight, aspectHeight)
        }
        let padding = options.padding
        outWidth += ProcessingNumber.scaleEven(padding.left, pixelScale) + ProcessingNumber.scaleEven(padding.right, pixelScale)
        outHeight += ProcessingNumber.scaleEven(padding.top, pixelScale) + ProcessingNumber.scaleEven(padding.bottom, pixelScale)
        guard outWidth > limit || outHeight > limit else { return }
        let factor = Double(limit) / Double(max(outWidth, outHeight))
        widthScale = max(widthScale * factor, 1 / Double(toScale.width))
        heightScale = max(heightScale * factor, 1 / Double(toScale.height))
        pixelScale *= factor
        computeSizes(toScale, options: options)
    }
}
