import Foundation

/// The picture a ``ProcessingTransformer`` lays over its results where
/// ``ProcessingOptions/watermark`` asks (imgproxy's `IMGPROXY_WATERMARK_PATH`/`_URL`), with an
/// identity that becomes part of cache keys: two watermark pictures never share a cached result.
public struct WatermarkImage: Sendable {
    /// The picture, upright (its first frame for an animation).
    public let image: Image
    /// The first 16 hex digits of the SHA-256 of its RGBA pixels.
    public let identity: String

    /// Wraps `image` (turned upright; an animation's first frame; 8 bits per channel: a 16-bit
    /// picture is narrowed, and a 16-bit result keeps its depth under it).
    /// - Throws: ``ImageCodingError`` when it cannot be turned upright (memory).
    public init(image: Image) throws {
        let upright = try image.frames[0].image.reducedToEightBits().oriented()
        self.image = upright
        identity = String(upright.rgbaSHA256().prefix(16))
    }

    /// Where the watermark goes on an image of `size` and what it looks like there: the picture
    /// scaled (``ProcessingOptions/Watermark/scale``) or tiled over the whole image
    /// (``ProcessingOptions/Watermark/replicates``), and its top-left corner. imgproxy's geometry:
    /// scaling fits into `scale` × the image's sides (rounded half to even, enlarging allowed);
    /// tiling pads each tile by the offsets (pixels times `pixelScale` when 1 or more, else
    /// fractions of the image), repeats it an odd number of times across and down, and keeps the
    /// centred part the size of the image.
    func overlay(for size: PixelSize, placement: ProcessingOptions.Watermark, pixelScale: Double) throws -> (image: Image, x: Int, y: Int) {
        var picture = image
        if let scale = placement.scale, scale > 0 {
            let box = PixelSize(width: max(ProcessingNumber.scaleEven(size.width, scale), 1),
                                height: max(ProcessingNumber.scaleEven(size.height, scale), 1))
            var fit = ProcessingOptions()
            (fit.width, fit.height, fit.enlarge) = (box.width, box.height, true)
            picture = try ProcessingTransformer(options: fit).transform(picture, forKey: "")
        }
        guard placement.replicates else {
            let origin = placement.position.position(of: picture.size, in: size, pixelScale: pixelScale, allowsOverflow: true)
            return (picture, origin.x, origin.y)
        }
        func spacing(_ value: Double, _ side: Int) -> Int {
            abs(value) >= 1 ? Int(ProcessingNumber.roundEven(value * pixelScale)) : ProcessingNumber.scaleEven(side, value)
        }
        // A spacing wider than the image shows one tile whatever it is: clamped, so a hostile spacing
        // cannot ask for a giant tile.
        let padX = min(max(0, spacing(placement.position.x, size.width)), size.width)
        let padY = min(max(0, spacing(placement.position.y, size.height)), size.height)
        let tile = PixelSize(width: picture.width + padX, height: picture.height + padY)
        picture = try picture.embedded(in: tile, at: (padX / 2, padY / 2), background: nil)
        func count(_ side: Int, _ tileSide: Int) -> Int {
            let times = (side + tileSide - 1) / tileSide
            return times % 2 == 0 ? times + 1 : times
        }
        let across = count(size.width, tile.width), down = count(size.height, tile.height)
        let tiled = PixelSize(width: across * tile.width, height: down * tile.height)
        let window = (x: (tiled.width - size.width) / 2, y: (tiled.height - size.height) / 2)
        let tileRGBA = [UInt8](try picture.converted(to: .rgba8).pixels)
        var pixels = [UInt8](repeating: 0, count: size.width * size.height * 4)
        for y in 0..<size.height {
            let tileRow = ((y + window.y) % tile.height) * tile.width * 4
            for x in 0..<size.width {
                let from = tileRow + ((x + window.x) % tile.width) * 4, to = (y * size.width + x) * 4
                for c in 0..<4 { pixels[to + c] = tileRGBA[from + c] }
            }
        }
        let canvas = try Image(width: size.width, height: size.height, pixelFormat: .rgba8, pixels: pixels)
        return (canvas, 0, 0)
    }
}

extension Image {
    /// This image with `overlay` laid over it at `origin` (it may hang off the edges), its alpha
    /// times `opacity`, composited "over" with straight alpha.
    func composited(with overlay: Image, at origin: (x: Int, y: Int), opacity: Double) throws -> Image {
        let visible = PixelRect(x: origin.x, y: origin.y, width: overlay.width, height: overlay.height)
            .intersection(PixelRect(x: 0, y: 0, width: width, height: height))
        guard !visible.isEmpty, opacity > 0 else { return self }
        if pixelFormat.isHighBitDepth { return try composited16(with: overlay, at: origin, visible: visible, opacity: opacity) }
        let strength = Int((min(opacity, 1) * 255).rounded())
        let target: PixelFormat = pixelFormat.hasAlpha ? .rgba8
            : (pixelFormat.isColor || overlay.pixelFormat.isColor ? .rgb8 : .gray8)
        var overlayRow = [UInt8](repeating: 0, count: overlay.width * 4)
        return try mappingRGBARows(to: target) { row, y in
            guard y >= visible.y, y < visible.y + visible.height else { return }
            overlayRow.withUnsafeMutableBytes { buffer in
                overlay.withUnsafeRow(y - origin.y) { source in Self.expandToRGBA(source, from: overlay.pixelFormat, into: buffer, width: overlay.width) }
            }
            for x in visible.x..<(visible.x + visible.width) {
                let o = (x - origin.x) * 4, t = x * 4
                let alpha = Int(overlayRow[o + 3]) * strength / 255
                guard alpha > 0 else { continue }
                let below = Int(row[t + 3])
                let outAlpha = alpha * 255 + below * (255 - alpha)   // scaled by 255
                for c in 0..<3 {
                    let value = (Int(overlayRow[o + c]) * alpha * 255 + Int(row[t + c]) * below * (255 - alpha) + outAlpha / 2) / max(outAlpha, 1)
                    row[t + c] = UInt8(min(value, 255))
                }
                row[t + 3] = UInt8((outAlpha + 127) / 255)
            }
        }
    }

    /// ``composited(with:at:opacity:)`` on a 16-bit image: the same "over" in 16-bit samples, the
    /// overlay widened; the result stays 16-bit (colour when either is colour, as libvips makes it).
    private func composited16(with overlay: Image, at origin: (x: Int, y: Int), visible: PixelRect, opacity: Double) throws -> Image {
        let target = PixelFormat.layout(color: pixelFormat.isColor || overlay.pixelFormat.isColor, alpha: pixelFormat.hasAlpha, highBitDepth: true)
        let rowBytes = width * target.bytesPerPixel
        let storage: PixelStorage
        do { storage = try PixelStorage(byteCount: rowBytes * height) } catch { throw TransformSupport.transformError(error) }
        let strength = UInt64((min(opacity, 1) * 65535).rounded())
        var row = [UInt16](repeating: 0, count: width * 4)
        var overlayRow = [UInt16](repeating: 0, count: overlay.width * 4)
        for y in 0..<height {
            row.withUnsafeMutableBufferPointer { rgba in
                withUnsafeRow(y) { Self.expandToRGBA16($0, from: pixelFormat, into: rgba, width: width) }
                if y >= visible.y, y < visible.y + visible.height {
                    overlayRow.withUnsafeMutableBufferPointer { over in
                        overlay.withUnsafeRow(y - origin.y) { Self.expandToRGBA16($0, from: overlay.pixelFormat, into: over, width: overlay.width) }
                        for x in visible.x..<(visible.x + visible.width) {
                            let o = (x - origin.x) * 4, t = x * 4
                            let alpha = UInt64(over[o + 3]) * strength / 65535
                            guard alpha > 0 else { continue }
                            let below = UInt64(rgba[t + 3])
                            let outAlpha = alpha * 65535 + below * (65535 - alpha)   // scaled by 65535
                            for c in 0..<3 {
                                let value = (UInt64(over[o + c]) * alpha * 65535 + UInt64(rgba[t + c]) * below * (65535 - alpha) + outAlpha / 2)
                                    / max(outAlpha, 1)
                                rgba[t + c] = UInt16(min(value, 65535))
                            }
                            rgba[t + 3] = UInt16((outAlpha + 32_767) / 65535)
                        }
                    }
                }
                Self.packRGBA16(UnsafeBufferPointer(rgba), into: storage.bytes + y * rowBytes, as: target, width: width)
            }
        }
        return derived(storage: storage, width: width, height: height, pixelFormat: target)
    }
}
