import CPixels

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

    /// The weights of ``forEachContribution(source:target:_:)`` laid out for the inner loops: every
    /// output pixel has the same number of taps (zeros where it needs fewer), its first source index
    /// moved back so the taps stay inside the source, and all weights in one flat array. Made in two
    /// passes over the contributions, with no array per output pixel (a cold server request made
    /// 852 of them, and a key path projection each, for its 512×340 thumbnail).
    struct Taps {
        var firsts: [Int]
        var count: Int
        var weights: [Float]

        init(source: Int, target: Int) {
            var count = 1
            Resampler.forEachContribution(source: source, target: target) { _, _, weights in count = max(count, weights.count) }
            var firsts: [Int] = []
            firsts.reserveCapacity(target)
            var flat = [Float](repeating: 0, count: target * count)
            Resampler.forEachContribution(source: source, target: target) { index, first, weights in
                let start = min(first, source - count)   // count <= source: no output needs more
                let skip = first - start
                firsts.append(start)
                for k in 0..<weights.count { flat[index * count + skip + k] = weights[k] }
            }
            self.firsts = firsts
            self.count = count
            self.weights = flat
        }
    }

    /// Returns `image` (or the part of it inside `region`, which must lie within the image) resized
    /// to exactly `size` (same pixel format, orientation and metadata).
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)``.
    static func resample(_ image: Image, region: PixelRect? = nil, to size: PixelSize) throws(ImageCodingError) -> Image {
        precondition(size.width > 0 && size.height > 0)
        let region = region ?? PixelRect(x: 0, y: 0, width: image.width, height: image.height)
        precondition(!region.isEmpty && region.intersection(PixelRect(x: 0, y: 0, width: image.width, height: image.height)) == region)
        if size == image.size && region.size == image.size { return image }
        if image.pixelFormat.isHighBitDepth { return try resample16(image, region: region, to: size) }
        let channels = image.pixelFormat.bytesPerPixel
        let alpha = image.pixelFormat.hasAlpha
        let horizontal = Taps(source: region.width, target: size.width)
        let vertical = Taps(source: region.height, target: size.height)

        // Vertical first (each output row from a few source rows, bytes to premultiplied floats),
        // then horizontal (that row to `size.width` pixels), then rounded (and un-premultiplied)
        // into the output row: two rows of floats in all, and the horizontal pass, the costlier
        // one per sample, runs on output rows only.
        let outRow = size.width * channels
        let storage = try PixelStorage(byteCount: outRow * size.height)
        let target = storage.bytes.bindMemory(to: UInt8.self, capacity: outRow * size.height)
        let sourceCount = region.width * channels
        var columns = [Float](repeating: 0, count: sourceCount)
        var filtered = [Float](repeating: 0, count: outRow)
        var rows = [UnsafePointer<UInt8>?](repeating: nil, count: vertical.count)
        let firsts = horizontal.firsts.map { CLong($0) }
        image.withUnsafePixels { pixels in
            let base = pixels.baseAddress!.assumingMemoryBound(to: UInt8.self) + region.x * channels
            columns.withUnsafeMutableBufferPointer { columns in
                filtered.withUnsafeMutableBufferPointer { filtered in
                    rows.withUnsafeMutableBufferPointer { rows in
                        for y in 0..<size.height {
                            for k in 0..<vertical.count { rows[k] = UnsafePointer(base + (region.y + vertical.firsts[y] + k) * image.bytesPerRow) }
                            vertical.weights.withUnsafeBufferPointer { weights in
                                wi_filter_rows(rows.baseAddress!, weights.baseAddress! + y * vertical.count, vertical.count, sourceCount,
                                               alpha ? channels : 0, columns.baseAddress!)
                            }
                            wi_filter_columns(columns.baseAddress!, firsts, horizontal.weights, horizontal.count, size.width, channels,
                                              filtered.baseAddress!)
                            if alpha {
                                wi_store_unpremultiplied(filtered.baseAddress!, size.width, channels, target + y * outRow)
                            } else {
                                wi_store_rounded(filtered.baseAddress!, outRow, target + y * outRow)
                            }
                        }
                    }
                }
            }
        }
        return Image(storage: storage, width: size.width, height: size.height, pixelFormat: image.pixelFormat,
                     bytesPerRow: outRow, format: image.format, scale: image.scale, orientation: image.orientation)
    }

    /// ``resample(_:region:to:)`` for 16-bit samples: the same filter, premultiplied on a 0...65535 scale.
    private static func resample16(_ image: Image, region: PixelRect, to size: PixelSize) throws(ImageCodingError) -> Image {
        let channels = image.pixelFormat.channelCount
        let alpha = image.pixelFormat.hasAlpha
        let horizontal = Taps(source: region.width, target: size.width)
        let vertical = Taps(source: region.height, target: size.height)
        let outSamples = size.width * channels
        let outRow = outSamples * 2
        let storage = try PixelStorage(byteCount: outRow * size.height)
        let target = storage.bytes.bindMemory(to: UInt16.self, capacity: outSamples * size.height)
        let sourceCount = region.width * channels
        var columns = [Float](repeating: 0, count: sourceCount)
        var filtered = [Float](repeating: 0, count: outSamples)
        var rows = [UnsafePointer<UInt16>?](repeating: nil, count: vertical.count)
        let firsts = horizontal.firsts.map { CLong($0) }
        image.withUnsafePixels { pixels in
            let base = pixels.baseAddress! + region.x * image.pixelFormat.bytesPerPixel
            for y in 0..<size.height {
                for k in 0..<vertical.count {
                    rows[k] = UnsafePointer((base + (region.y + vertical.firsts[y] + k) * image.bytesPerRow).assumingMemoryBound(to: UInt16.self))
                }
                vertical.weights.withUnsafeBufferPointer { weights in
                    wi_filter_rows16(rows, weights.baseAddress! + y * vertical.count, vertical.count, sourceCount, alpha ? channels : 0, &columns)
                }
                wi_filter_columns(columns, firsts, horizontal.weights, horizontal.count, size.width, channels, &filtered)
                if alpha {
                    wi_store_unpremultiplied16(filtered, size.width, channels, target + y * outSamples)
                } else {
                    wi_store_rounded16(filtered, outSamples, target + y * outSamples)
                }
            }
        }
        return Image(storage: storage, width: size.width, height: size.height, pixelFormat: image.pixelFormat,
                     bytesPerRow: outRow, format: image.format, scale: image.scale, orientation: image.orientation)
    }

    /// Calls `body` with each output sample's share of the source along one axis, in order: its
    /// index, its first source sample, and the weights of that sample and the next ones (valid during
    /// the call only).
    static func forEachContribution(source: Int, target: Int, _ body: (_ index: Int, _ first: Int, _ weights: UnsafeBufferPointer<Float>) -> Void) {
        let scale = Double(source) / Double(target)
        // An area spans at most ceil(scale) + 1 source samples; bilinear takes two.
        var scratch = [Float](repeating: 0, count: scale >= 1 ? Int(scale.rounded(.up)) + 2 : 2)
        scratch.withUnsafeMutableBufferPointer { scratch in
            for i in 0..<target {
                if scale >= 1 {
                    // Area average: output i covers source interval [i·scale, (i+1)·scale).
                    let start = Double(i) * scale
                    let end = min(Double(i + 1) * scale, Double(source))
                    let first = Int(start)
                    let last = min(Int((end - 1e-9).rounded(.down)), source - 1)
                    var count = 0
                    for s in first...last {
                        let covered = min(end, Double(s + 1)) - max(start, Double(s))
                        scratch[count] = Float(covered / (end - start))
                        count += 1
                    }
                    body(i, first, UnsafeBufferPointer(rebasing: scratch[0..<count]))
                } else if source == 1 {
                    scratch[0] = 1
                    body(i, 0, UnsafeBufferPointer(rebasing: scratch[0..<1]))
                } else {
                    // Bilinear: sample the source at the output pixel's centre.
                    let centre = (Double(i) + 0.5) * scale - 0.5
                    let clamped = min(max(centre, 0), Double(source - 1))
                    let first = min(Int(clamped), max(source - 2, 0))
                    let fraction = Float(clamped - Double(first))
                    scratch[0] = 1 - fraction
                    scratch[1] = fraction
                    body(i, first, UnsafeBufferPointer(rebasing: scratch[0..<2]))
                }
            }
        }
    }
}
