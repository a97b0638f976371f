/// Resizes pixels with a separable filter: area averaging when shrinking (every source pixel
/// contributes in proportion to the area it covers, so a 20 MP → 256 px reduction does not alias),
/// bilinear interpolation when enlarging. Formats with alpha are filtered premultiplied, so
/// transparent pixels do not darken their neighbours' edges.
enum Resampler {
    /// `image` resized to the size `options` ask for (thumbnail, scale-down limit), or `image` itself
    /// when that is its own size: what coders without scaling on load do after a full decode.
    static func fitted(_ image: Image, options: DecodeOptions) throws(ImageCodingError) -> Image {
        let target = options.outputSize(forSource: image.size)
        return target == image.size ? image : try resample(image, to: target)
    }

    /// The source pixels and weights that make one output pixel along one axis.
    struct Contribution {
        var first: Int
        var weights: [Float]
    }

    /// Returns `image` (or the part of it inside `region`, which must lie within the image) resized
    /// to exactly `size` (same pixel format, orientation and metadata).
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)``.
    static func resample(_ image: Image, region: PixelRect? = nil, to size: PixelSize) throws(ImageCodingError) -> Image {
        precondition(size.width > 0 && size.height > 0)
        let region = region ?? PixelRect(x: 0, y: 0, width: image.width, height: image.height)
        precondition(!region.isEmpty && region.intersection(PixelRect(x: 0, y: 0, width: image.width, height: image.height)) == region)
        if size == image.size && region.size == image.size { return image }
        let channels = image.pixelFormat.bytesPerPixel
        let alpha = image.pixelFormat.hasAlpha
        let horizontal = contributions(source: region.width, target: size.width)
        let vertical = contributions(source: region.height, target: size.height)

        // Pass 1: each source row → `size.width` premultiplied float pixels.
        let rowFloats = size.width * channels
        var intermediate = [Float](repeating: 0, count: rowFloats * region.height)
        var premultiplied = [Float](repeating: 0, count: region.width * channels)
        intermediate.withUnsafeMutableBufferPointer { mid in
            premultiplied.withUnsafeMutableBufferPointer { row in
                for y in 0..<region.height {
                    image.withUnsafeRow(region.y + y) { whole in
                        let raw = UnsafeRawBufferPointer(rebasing: whole[(region.x * channels)..<((region.x + region.width) * channels)])
                        let source = raw.bindMemory(to: UInt8.self)
                        if alpha {
                            for x in 0..<region.width {
                                let a = Float(source[x * channels + channels - 1])
                                for c in 0..<(channels - 1) {
                                    row[x * channels + c] = Float(source[x * channels + c]) * a * (1 / 255)
                                }
                                row[x * channels + channels - 1] = a
                            }
                        } else {
                            for i in 0..<(region.width * channels) { row[i] = Float(source[i]) }
                        }
                    }
                    let out = mid.baseAddress! + y * rowFloats
                    for (x, contribution) in horizontal.enumerated() {
                        for c in 0..<channels {
                            var sum: Float = 0
                            var index = contribution.first * channels + c
                            for weight in contribution.weights {
                                sum += row[index] * weight
                                index += channels
                            }
                            out[x * channels + c] = sum
                        }
                    }
                }
            }
        }

        // Pass 2: columns of the intermediate → output rows, un-premultiplied and rounded.
        let outRow = size.width * channels
        let storage = try PixelStorage(byteCount: outRow * size.height)
        let target = storage.bytes.bindMemory(to: UInt8.self, capacity: outRow * size.height)
        var accumulator = [Float](repeating: 0, count: rowFloats)
        intermediate.withUnsafeBufferPointer { mid in
            accumulator.withUnsafeMutableBufferPointer { sums in
                for (y, contribution) in vertical.enumerated() {
                    for i in 0..<rowFloats { sums[i] = 0 }
                    for (k, weight) in contribution.weights.enumerated() {
                        let line = mid.baseAddress! + (contribution.first + k) * rowFloats
                        for i in 0..<rowFloats { sums[i] += line[i] * weight }
                    }
                    let out = target + y * outRow
                    if alpha {
                        for x in 0..<size.width {
                            let a = sums[x * channels + channels - 1]
                            let unpremultiply: Float = a > 0 ? 255 / a : 0
                            for c in 0..<(channels - 1) {
                                out[x * channels + c] = clampToByte(sums[x * channels + c] * unpremultiply)
                            }
                            out[x * channels + channels - 1] = clampToByte(a)
                        }
                    } else {
                        for i in 0..<rowFloats { out[i] = clampToByte(sums[i]) }
                    }
                }
            }
        }
        return Image(storage: storage, width: size.width, height: size.height, pixelFormat: image.pixelFormat,
                     bytesPerRow: outRow, format: image.format, scale: image.scale, orientation: image.orientation)
    }

    /// The weights that map `source` samples onto `target` samples along one axis.
    static func contributions(source: Int, target: Int) -> [Contribution] {
        let scale = Double(source) / Double(target)
        if scale >= 1 {
            // Area average: output i covers source interval [i·scale, (i+1)·scale).
            return (0..<target).map { i in
                let start = Double(i) * scale
                let end = min(Double(i + 1) * scale, Double(source))
                let first = Int(start)
                let last = min(Int((end - 1e-9).rounded(.down)), source - 1)
                var weights: [Float] = []
                for s in first...last {
                    let covered = min(end, Double(s + 1)) - max(start, Double(s))
                    weights.append(Float(covered / (end - start)))
                }
                return Contribution(first: first, weights: weights)
            }
        }
        // Bilinear: sample the source at the output pixel's centre.
        return (0..<target).map { i in
            let centre = (Double(i) + 0.5) * scale - 0.5
            let clamped = min(max(centre, 0), Double(source - 1))
            let first = min(Int(clamped), max(source - 2, 0))
            if source == 1 { return Contribution(first: 0, weights: [1]) }
            let fraction = Float(clamped - Double(first))
            return Contribution(first: first, weights: [1 - fraction, fraction])
        }
    }

    @inline(__always)
    private static func clampToByte(_ value: Float) -> UInt8 {
        UInt8(min(max(value + 0.5, 0), 255))
    }
}
