extension Image {
    /// Returns the image with its pixels in `pixelFormat`, tightly packed (the image itself when it
    /// already is).
    ///
    /// Gray becomes colour by replicating the gray value; colour becomes gray by BT.601 luma
    /// (0.299 R + 0.587 G + 0.114 B, rounded); adding alpha makes every pixel opaque; removing alpha
    /// drops it (the colour channels are kept as stored). Only the first frame is converted.
    ///
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` if the new pixels cannot be allocated.
    /// Between depths, 8-bit samples widen as `v × 257` (0…255 onto 0…65535) and 16-bit samples
    /// narrow to the nearest 8-bit value.
    public func converted(to pixelFormat: PixelFormat) throws(ImageCodingError) -> Image {
        let packedRow = width * pixelFormat.bytesPerPixel
        if pixelFormat == self.pixelFormat && bytesPerRow == packedRow { return self }
        let storage = try PixelStorage(byteCount: packedRow * height)
        if pixelFormat.isHighBitDepth || self.pixelFormat.isHighBitDepth {
            convertDepth(into: storage, as: pixelFormat)
            return Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: packedRow,
                         format: format, scale: scale, orientation: orientation)
        }
        var rgbaRow = [UInt8](repeating: 0, count: width * 4)
        for y in 0..<height {
            withUnsafeRow(y) { source in
                rgbaRow.withUnsafeMutableBytes { rgba in
                    Self.expandToRGBA(source, from: self.pixelFormat, into: rgba, width: width)
                    let target = UnsafeMutableRawBufferPointer(start: storage.bytes + y * packedRow, count: packedRow)
                    Self.packRGBA(UnsafeRawBufferPointer(rgba), into: target, as: pixelFormat, width: width)
                }
            }
        }
        return Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: packedRow,
                     format: format, scale: scale, orientation: orientation)
    }

    /// Writes `width` pixels of `format` from `source` as RGBA into `target` (4 × width bytes).
    static func expandToRGBA(_ source: UnsafeRawBufferPointer, from format: PixelFormat,
                             into target: UnsafeMutableRawBufferPointer, width: Int) {
        let s = source.bindMemory(to: UInt8.self)
        let t = target.bindMemory(to: UInt8.self)
        switch format {
        case .gray16, .grayAlpha16, .rgb16, .rgba16:
            preconditionFailure("8-bit rows only: 16-bit layouts convert through convertDepth(into:as:)")
        case .gray8:
            for x in 0..<width {
                let v = s[x]
                t[4 * x] = v; t[4 * x + 1] = v; t[4 * x + 2] = v; t[4 * x + 3] = 255
            }
        case .grayAlpha8:
            for x in 0..<width {
                let v = s[2 * x]
                t[4 * x] = v; t[4 * x + 1] = v; t[4 * x + 2] = v; t[4 * x + 3] = s[2 * x + 1]
            }
        case .rgb8:
            for x in 0..<width {
                t[4 * x] = s[3 * x]; t[4 * x + 1] = s[3 * x + 1]; t[4 * x + 2] = s[3 * x + 2]; t[4 * x + 3] = 255
            }
        case .rgba8:
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<(4 * width)]))
        }
    }

    /// Writes `width` RGBA pixels from `source` into `target` in `format`.
    static func packRGBA(_ source: UnsafeRawBufferPointer, into target: UnsafeMutableRawBufferPointer,
                         as format: PixelFormat, width: Int) {
        let s = source.bindMemory(to: UInt8.self)
        let t = target.bindMemory(to: UInt8.self)
        func luma(_ x: Int) -> UInt8 {
            let red: UInt32 = 299 * UInt32(s[4 * x])
            let green: UInt32 = 587 * UInt32(s[4 * x + 1])
            let blue: UInt32 = 114 * UInt32(s[4 * x + 2])
            return UInt8((red + green + blue + 500) / 1000)
        }
        switch format {
        case .gray16, .grayAlpha16, .rgb16, .rgba16:
            preconditionFailure("8-bit rows only: 16-bit layouts convert through convertDepth(into:as:)")
        case .gray8:
            for x in 0..<width { t[x] = luma(x) }
        case .grayAlpha8:
            for x in 0..<width { t[2 * x] = luma(x); t[2 * x + 1] = s[4 * x + 3] }
        case .rgb8:
            for x in 0..<width { t[3 * x] = s[4 * x]; t[3 * x + 1] = s[4 * x + 1]; t[3 * x + 2] = s[4 * x + 2] }
        case .rgba8:
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<(4 * width)]))
        }
    }

    /// One straight-alpha channel composited over a background channel, rounded:
    /// `(c·a + b·(255 − a) + 127) / 255`. Every flattening uses it (backgrounds, placeholders), so
    /// opaque pixels keep their exact values everywhere.
    @inline(__always)
    static func composite(_ channel: UInt8, alpha: UInt8, over background: UInt8) -> UInt8 {
        let a = Int(alpha)
        let sum: Int = Int(channel) * a + Int(background) * (255 - a) + 127
        return UInt8(sum / 255)
    }
}
