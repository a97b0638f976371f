/// Three running-sum box blurs along each axis, the Gaussian approximation of the CSS and SVG
/// filter specifications: for an odd box size `d`, three boxes of `d` centred on the pixel; for an
/// even one, a box of `d` leaning left, one of `d` leaning right, and one of `d + 1` centred.
///
/// Pixels are worked on as 16-bit values scaled by 255 (colour premultiplied by alpha when there is
/// alpha), so the rounding of the six passes stays far below one step of the 8-bit result.
struct BoxBlur {
    /// The box size `d`, at least 2 and at most 65 000 (so a sum of 16-bit values fits 32 bits).
    let boxSize: Int

    /// The three boxes: how many pixels each reaches before and after the centre.
    var boxes: [(before: Int, after: Int)] {
        let half = boxSize / 2
        if boxSize % 2 == 1 { return Array(repeating: (half, half), count: 3) }
        return [(half, half - 1), (half - 1, half), (half, half)]
    }

    func blur(_ image: Image) throws(ImageTransformError) -> Image {
        let width = image.width, height = image.height
        let channels = image.pixelFormat.bytesPerPixel
        let hasAlpha = image.pixelFormat.hasAlpha
        let rowCount = width * channels
        let count = rowCount * height
        let first = UnsafeMutablePointer<UInt16>.allocate(capacity: count)
        let second = UnsafeMutablePointer<UInt16>.allocate(capacity: count)
        let line = UnsafeMutablePointer<UInt16>.allocate(capacity: rowCount)
        let sums = UnsafeMutablePointer<UInt32>.allocate(capacity: rowCount)
        defer {
            first.deallocate()
            second.deallocate()
            line.deallocate()
            sums.deallocate()
        }
        let boxes = self.boxes

        // Load each row scaled (and premultiplied), then blur it horizontally three times.
        for y in 0..<height {
            let row = first + y * rowCount
            image.withUnsafeRow(y) { raw in
                let source = raw.bindMemory(to: UInt8.self)
                if hasAlpha {
                    for x in 0..<width {
                        let alpha = UInt16(source[x * channels + channels - 1])
                        for c in 0..<(channels - 1) { row[x * channels + c] = UInt16(source[x * channels + c]) * alpha }
                        row[x * channels + channels - 1] = alpha * 255
                    }
                } else {
                    for i in 0..<rowCount { row[i] = UInt16(source[i]) * 255 }
                }
            }
            for (index, box) in boxes.enumerated() {
                let (from, to) = index == 1 ? (line, row) : (row, line)
                for c in 0..<channels {
                    Self.blurLine(from + c, into: to + c, count: width, stride: channels, box: box)
                }
            }
            row.update(from: line, count: rowCount)
        }

        // Vertical passes: one running sum per column, advanced a whole row at a time.
        var (source, target) = (first, second)
        for box in boxes {
            Self.blurColumns(source, into: target, rowCount: rowCount, height: height, box: box, sums: sums)
            swap(&source, &target)
        }

        let storage = try TransformSupport.allocate(width: width, height: height, format: image.pixelFormat)
        let output = storage.bytes.bindMemory(to: UInt8.self, capacity: count)
        if hasAlpha {
            for pixel in stride(from: 0, to: count, by: channels) {
                let alpha = UInt32(source[pixel + channels - 1])
                let scale: Float = alpha > 0 ? 255 / Float(alpha) : 0
                for c in 0..<(channels - 1) { output[pixel + c] = TransformSupport.byte(Float(source[pixel + c]) * scale) }
                output[pixel + channels - 1] = UInt8((alpha + 127) / 255)
            }
        } else {
            for i in 0..<count { output[i] = UInt8((UInt32(source[i]) + 127) / 255) }
        }
        return image.derived(storage: storage, width: width, height: height, pixelFormat: image.pixelFormat)
    }

    /// `2³² / size`, rounded: multiplying a sum by it and shifting right 32 bits divides by `size`.
    private static func reciprocal(_ size: Int) -> UInt64 {
        ((1 << 32) + UInt64(size) / 2) / UInt64(size)
    }

    /// One box pass along a line of `count` samples `stride` apart; edges repeat the end samples.
    private static func blurLine(_ source: UnsafePointer<UInt16>, into target: UnsafeMutablePointer<UInt16>,
                                 count: Int, stride: Int, box: (before: Int, after: Int)) {
        let last = count - 1
        let multiplier = reciprocal(box.before + box.after + 1)
        // The window around sample 0: `before` copies of the first sample, then the line itself,
        // then copies of the last sample where the window reaches past the end.
        var sum = UInt32(box.before) * UInt32(source[0]) + UInt32(max(0, box.after - last)) * UInt32(source[last * stride])
        for i in 0...min(box.after, last) { sum += UInt32(source[i * stride]) }
        for x in 0..<count {
            target[x * stride] = UInt16((UInt64(sum) * multiplier + (1 << 31)) >> 32)
            sum += UInt32(source[min(x + box.after + 1, last) * stride])
            sum -= UInt32(source[max(x - box.before, 0) * stride])
        }
    }

    /// One box pass down every column at once; edges repeat the first and last rows.
    private static func blurColumns(_ source: UnsafePointer<UInt16>, into target: UnsafeMutablePointer<UInt16>,
                                    rowCount: Int, height: Int, box: (before: Int, after: Int),
                                    sums: UnsafeMutablePointer<UInt32>) {
        let last = height - 1
        let multiplier = reciprocal(box.before + box.after + 1)
        let top = source, bottom = source + last * rowCount
        let (topCopies, bottomCopies) = (UInt32(box.before), UInt32(max(0, box.after - last)))
        for i in 0..<rowCount { sums[i] = topCopies * UInt32(top[i]) + bottomCopies * UInt32(bottom[i]) }
        for y in 0...min(box.after, last) {
            let row = source + y * rowCount
            for i in 0..<rowCount { sums[i] += UInt32(row[i]) }
        }
        for y in 0..<height {
            let out = target + y * rowCount
            for i in 0..<rowCount { out[i] = UInt16((UInt64(sums[i]) * multiplier + (1 << 31)) >> 32) }
            let entering = source + min(y + box.after + 1, last) * rowCount
            let leaving = source + max(y - box.before, 0) * rowCount
            for i in 0..<rowCount { sums[i] = sums[i] &+ UInt32(entering[i]) &- UInt32(leaving[i]) }
        }
    }
}
