extension Image {
    /// The part of this image left after removing a uniform border (imgproxy's `trim`): every pixel
    /// whose colour differs from the border colour by more than `trim.threshold` in some channel
    /// belongs to the content. Transparency is first flattened onto magenta (as imgproxy does), so
    /// a transparent border is found with the colour `ff00ff` or the top-left pixel. `nil` when
    /// nothing would be removed or everything would (a uniform image is left as it is).
    func trimRect(_ trim: ProcessingOptions.Trim) -> PixelRect? {
        var rgba = [UInt8](repeating: 0, count: width * 4)
        func flattenedRow(_ y: Int) {
            rgba.withUnsafeMutableBytes { target in
                withUnsafeRow(y) { source in Self.expandToRGBA(source, from: pixelFormat, into: target, width: width) }
            }
            guard pixelFormat.hasAlpha else { return }
            let magenta = [255, 0, 255]
            for x in 0..<width {
                let alpha = Int(rgba[x * 4 + 3])
                for c in 0..<3 { rgba[x * 4 + c] = UInt8((Int(rgba[x * 4 + c]) * alpha + magenta[c] * (255 - alpha) + 127) / 255) }
            }
        }
        let reference: [Int]
        if let color = trim.color {
            reference = [Int(color.red), Int(color.green), Int(color.blue)]
        } else {
            flattenedRow(0)
            reference = [Int(rgba[0]), Int(rgba[1]), Int(rgba[2])]
        }
        let threshold = max(0, trim.threshold)
        var minX = width, minY = height, maxX = -1, maxY = -1
        for y in 0..<height {
            flattenedRow(y)
            for x in 0..<width {
                let differs = (0..<3).contains { Double(abs(Int(rgba[x * 4 + $0]) - reference[$0])) > threshold }
                if differs {
                    minX = min(minX, x)
                    maxX = max(maxX, x)
                    minY = min(minY, y)
                    maxY = max(maxY, y)
                }
            }
        }
        guard maxX >= 0 else { return nil }
        var left = minX, right = width - 1 - maxX, top = minY, bottom = height - 1 - maxY
        if trim.equalHorizontal { (left, right) = (min(left, right), min(left, right)) }
        if trim.equalVertical { (top, bottom) = (min(top, bottom), min(top, bottom)) }
        let rect = PixelRect(x: left, y: top, width: width - left - right, height: height - top - bottom)
        return rect.size == size ? nil : rect
    }
}
