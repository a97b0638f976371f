extension Image {
    /// This image on a `canvas`-sized canvas with its top-left corner at `origin` (parts outside the
    /// canvas are cut): what extending and padding do. The canvas is `background`, or transparent
    /// when `background` is `nil` (an image without alpha gains an alpha channel then).
    func embedded(in canvas: PixelSize, at origin: (x: Int, y: Int), background: PixelColor?) throws(ImageTransformError) -> Image {
        let format: PixelFormat
        let fill: PixelColor
        if let background {
            format = !pixelFormat.isColor && background.red == background.green && background.green == background.blue
                ? (pixelFormat.hasAlpha || background.alpha < 255 ? .grayAlpha8 : .gray8)
                : (pixelFormat.hasAlpha || background.alpha < 255 ? .rgba8 : .rgb8)
            fill = background
        } else {
            format = !pixelFormat.isColor ? .grayAlpha8 : .rgba8
            fill = PixelColor(red: 0, green: 0, blue: 0, alpha: 0)
        }
        let storage = try TransformSupport.allocate(width: canvas.width, height: canvas.height, format: format)
        let bpp = format.bytesPerPixel
        let rowBytes = canvas.width * bpp
        let fillPixel: [UInt8] = switch format {
        case .gray8: [fill.red]
        case .grayAlpha8: [fill.red, fill.alpha]
        case .rgb8: [fill.red, fill.green, fill.blue]
        default: [fill.red, fill.green, fill.blue, fill.alpha]
        }
        var row = [UInt8](repeating: 0, count: rowBytes)
        for x in 0..<canvas.width { for c in 0..<bpp { row[x * bpp + c] = fillPixel[c] } }
        row.withUnsafeBytes { source in
            for y in 0..<canvas.height { (storage.bytes + y * rowBytes).copyMemory(from: source.baseAddress!, byteCount: rowBytes) }
        }
        let visible = PixelRect(x: origin.x, y: origin.y, width: width, height: height)
            .intersection(PixelRect(x: 0, y: 0, width: canvas.width, height: canvas.height))
        if !visible.isEmpty {
            var rgba = [UInt8](repeating: 0, count: width * 4)
            var packed = [UInt8](repeating: 0, count: width * bpp)
            for y in visible.y..<(visible.y + visible.height) {
                rgba.withUnsafeMutableBytes { rgbaRow in
                    withUnsafeRow(y - origin.y) { source in Self.expandToRGBA(source, from: pixelFormat, into: rgbaRow, width: width) }
                    packed.withUnsafeMutableBytes { target in Self.packRGBA(UnsafeRawBufferPointer(rgbaRow), into: target, as: format, width: width) }
                }
                let from = (visible.x - origin.x) * bpp
                packed.withUnsafeBytes { source in
                    (storage.bytes + y * rowBytes + visible.x * bpp).copyMemory(from: source.baseAddress! + from, byteCount: visible.width * bpp)
                }
            }
        }
        return derived(storage: storage, width: canvas.width, height: canvas.height, pixelFormat: format)
    }

    /// This image composited over `background` (straight alpha, rounded): no transparency left.
    func flattened(onto background: PixelColor) throws(ImageTransformError) -> Image {
        guard pixelFormat.hasAlpha else { return self }
        let grayBackground = background.red == background.green && background.green == background.blue
        let target: PixelFormat = !pixelFormat.isColor && grayBackground ? .gray8 : .rgb8
        let back = [background.red, background.green, background.blue]
        return try mappingRGBARows(to: target) { row, _ in
            for x in 0..<(row.count / 4) {
                let alpha = row[x * 4 + 3]
                for c in 0..<3 {
                    row[x * 4 + c] = Self.composite(row[x * 4 + c], alpha: alpha, over: back[c])
                }
                row[x * 4 + 3] = 255
            }
        }
    }
}
