extension Image {
    /// Returns the pixels turned upright according to ``orientation`` (width and height swap for
    /// orientations 5–8), with orientation ``ImageOrientation/up``; the image itself when already up.
    ///
    /// Lossless: pixels are moved, never resampled. Every frame of an animation is turned alike.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` if the new pixels cannot be allocated.
    public func oriented() throws(ImageCodingError) -> Image {
        if orientation == .up { return self }
        let first = try turnedPixels(orientation)
        guard isAnimated else { return first }
        let later = try laterFrames.map { (frame) throws(ImageCodingError) in
            ImageFrame(image: try frame.image.turnedPixels(orientation), duration: frame.duration,
                       storedDuration: frame.storedDuration)
        }
        return replacingFrames(first: first, later: later)
    }

    /// This image's own pixels turned upright from `orientation`, as a still image labelled `.up`.
    private func turnedPixels(_ orientation: ImageOrientation) throws(ImageCodingError) -> Image {
        if orientation == .up { return self }
        let swap = orientation.swapsDimensions
        let outWidth = swap ? height : width
        let outHeight = swap ? width : height
        let bpp = pixelFormat.bytesPerPixel
        let outRow = outWidth * bpp
        let storage = try PixelStorage(byteCount: outRow * outHeight)
        let w = width, h = height, stride = bytesPerRow
        // For each output pixel (x, y), the source pixel is base + x * dx + y * dy (in bytes).
        let (base, dx, dy): (Int, Int, Int) = switch orientation {
        case .up: (0, bpp, stride)
        case .upMirrored: ((w - 1) * bpp, -bpp, stride)
        case .down: ((h - 1) * stride + (w - 1) * bpp, -bpp, -stride)
        case .downMirrored: ((h - 1) * stride, bpp, -stride)
        case .leftMirrored: (0, stride, bpp)
        case .right: ((h - 1) * stride, -stride, bpp)
        case .rightMirrored: ((h - 1) * stride + (w - 1) * bpp, -stride, -bpp)
        case .left: ((w - 1) * bpp, stride, -bpp)
        }
        withUnsafePixels { source in
            let src = source.baseAddress!
            let dst = storage.bytes
            for y in 0..<outHeight {
                var from = base + y * dy
                var to = y * outRow
                for _ in 0..<outWidth {
                    (dst + to).copyMemory(from: src + from, byteCount: bpp)
                    from += dx
                    to += bpp
                }
            }
        }
        return Image(storage: storage, width: outWidth, height: outHeight, pixelFormat: pixelFormat, bytesPerRow: outRow,
                     format: format, scale: scale, orientation: .up)
    }
}
