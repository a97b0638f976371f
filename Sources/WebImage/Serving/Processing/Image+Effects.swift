extension Image {
    /// This image sharpened by an unsharp mask of Gaussian `sigma`: each channel moves away from its
    /// blurred value by the difference (amount 1), clamped to 0...255; alpha is kept.
    func sharpened(sigma: Double) throws -> Image {
        guard sigma > 0 else { return self }
        let blurred = try BlurTransformer(radius: sigma).transform(self, forKey: "")
        guard blurred.width == width, blurred.height == height else { return self }
        var blurredRow = [UInt8](repeating: 0, count: width * 4)
        return try mappingRGBARows(to: pixelFormat) { row, y in
            blurredRow.withUnsafeMutableBytes { target in
                blurred.withUnsafeRow(y) { source in Self.expandToRGBA(source, from: blurred.pixelFormat, into: target, width: width) }
            }
            for x in 0..<width {
                for c in 0..<3 {
                    let value = 2 * Int(row[x * 4 + c]) - Int(blurredRow[x * 4 + c])
                    row[x * 4 + c] = UInt8(min(max(value, 0), 255))
                }
            }
        }
    }

    /// This image in blocks of `size` × `size` pixels, each the average of its pixels (alpha
    /// weighted, so transparent pixels lend no colour); the blocks are laid from the top-left corner
    /// and the last ones may be smaller.
    func pixelated(blockSize size: Int) throws(ImageTransformError) -> Image {
        guard size > 1 else { return self }
        let blocksAcross = (width + size - 1) / size
        var sums = [Int](repeating: 0, count: blocksAcross * 5)   // premultiplied r, g, b, alpha, count
        var rgba = [UInt8](repeating: 0, count: width * 4)
        var averages = [[UInt8]]()
        for bandTop in stride(from: 0, to: height, by: size) {
            for index in sums.indices { sums[index] = 0 }
            for y in bandTop..<min(bandTop + size, height) {
                rgba.withUnsafeMutableBytes { target in
                    withUnsafeRow(y) { source in Self.expandToRGBA(source, from: pixelFormat, into: target, width: width) }
                }
                for x in 0..<width {
                    let block = (x / size) * 5, alpha = Int(rgba[x * 4 + 3])
                    for c in 0..<3 { sums[block + c] += Int(rgba[x * 4 + c]) * alpha }
                    sums[block + 3] += alpha
                    sums[block + 4] += 1
                }
            }
            var band = [UInt8](repeating: 0, count: blocksAcross * 4)
            for block in 0..<blocksAcross {
                let alphaSum = sums[block * 5 + 3], count = max(sums[block * 5 + 4], 1)
                for c in 0..<3 { band[block * 4 + c] = alphaSum == 0 ? 0 : UInt8((sums[block * 5 + c] + alphaSum / 2) / alphaSum) }
                band[block * 4 + 3] = UInt8((alphaSum + count / 2) / count)
            }
            averages.append(band)
        }
        return try mappingRGBARows(to: pixelFormat) { row, y in
            let band = averages[y / size]
            for x in 0..<width {
                let block = (x / size) * 4
                for c in 0..<4 { row[x * 4 + c] = band[block + c] }
            }
        }
    }
}
