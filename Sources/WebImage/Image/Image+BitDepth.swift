extension Image {
    /// This image with 8 bits per channel: itself when it has them, else every frame narrowed to the
    /// nearest 8-bit values (``PixelFormat/eightBit``). What every coder and transform that works
    /// on 8-bit samples is handed.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)``.
    public func reducedToEightBits() throws(ImageCodingError) -> Image {
        guard pixelFormat.isHighBitDepth else { return self }
        let first = try converted(to: pixelFormat.eightBit)
        guard isAnimated else { return first }
        var later: [ImageFrame] = []
        for frame in frames.dropFirst() {
            later.append(ImageFrame(image: try frame.image.converted(to: pixelFormat.eightBit), duration: frame.duration,
                                    storedDuration: frame.storedDuration))
        }
        return first.replacingFrames(first: first, later: later)
    }

    /// Converts the first frame between depths through a row of 16-bit RGBA.
    func convertDepth(into storage: PixelStorage, as target: PixelFormat) {
        let packedRow = width * target.bytesPerPixel
        var row = [UInt16](repeating: 0, count: width * 4)
        for y in 0..<height {
            withUnsafeRow(y) { source in
                row.withUnsafeMutableBufferPointer { rgba in
                    Self.expandToRGBA16(source, from: pixelFormat, into: rgba, width: width)
                    Self.packRGBA16(UnsafeBufferPointer(rgba), into: storage.bytes + y * packedRow, as: target, width: width)
                }
            }
        }
    }

    /// `width` pixels of `format` (any depth) as 16-bit RGBA; 8-bit samples widen as `v × 257`.
    static func expandToRGBA16(_ source: UnsafeRawBufferPointer, from format: PixelFormat, into target: UnsafeMutableBufferPointer<UInt16>,
                               width: Int) {
        let channels = format.channelCount
        let sample: (Int) -> UInt16
        if format.isHighBitDepth {
            let s = source.bindMemory(to: UInt16.self)
            sample = { s[$0] }
        } else {
            let s = source.bindMemory(to: UInt8.self)
            sample = { UInt16(s[$0]) &* 257 }
        }
        for x in 0..<width {
            let base = x * channels
            let (red, green, blue) = format.isColor ? (sample(base), sample(base + 1), sample(base + 2)) : (sample(base), sample(base), sample(base))
            target[4 * x] = red
            target[4 * x + 1] = green
            target[4 * x + 2] = blue
            target[4 * x + 3] = format.hasAlpha ? sample(base + channels - 1) : 65535
        }
    }

    /// `width` 16-bit RGBA pixels written in `format` (any depth) at `target`: gray by BT.601 luma,
    /// 8-bit samples the nearest of `v / 257`.
    static func packRGBA16(_ source: UnsafeBufferPointer<UInt16>, into target: UnsafeMutableRawPointer, as format: PixelFormat, width: Int) {
        let channels = format.channelCount
        let store: (Int, UInt16) -> Void
        if format.isHighBitDepth {
            let t = target.bindMemory(to: UInt16.self, capacity: width * channels)
            store = { t[$0] = $1 }
        } else {
            let t = target.bindMemory(to: UInt8.self, capacity: width * channels)
            store = { t[$0] = UInt8((UInt32($1) * 255 + 32_767) / 65_535) }
        }
        for x in 0..<width {
            let base = x * channels
            if format.isColor {
                store(base, source[4 * x])
                store(base + 1, source[4 * x + 1])
                store(base + 2, source[4 * x + 2])
            } else {
                let luma = (299 * UInt64(source[4 * x]) + 587 * UInt64(source[4 * x + 1]) + 114 * UInt64(source[4 * x + 2]) + 500) / 1000
                store(base, UInt16(luma))
            }
            if format.hasAlpha { store(base + channels - 1, source[4 * x + 3]) }
        }
    }
}
