import Foundation

/// A ThumbHash (evanw/thumbhash): about 25 bytes holding an image's low frequencies in a
/// luminance/chroma space, its alpha, its average colour and its approximate aspect ratio.
///
/// Encoding follows evanw's reference operation for operation (double precision, its rounding),
/// so the same pixels give the same bytes; see `scripts/placeholder-check.py`.
public struct ThumbHash: Sendable, Hashable, CustomStringConvertible {
    /// The hash's bytes (5 to 25 or so).
    public let bytes: [UInt8]

    /// The ThumbHash of `image`: its first frame, upright, scaled down to fit 100×100 (never from
    /// the full-size pixels).
    /// - Throws: ``ImageCodingError`` when the small copy cannot be allocated.
    public init(encoding image: Image) throws {
        self.init(pixels: try PlaceholderPixels(image: image))
    }

    /// The ThumbHash of pixels already small (at most 100×100).
    init(pixels: PlaceholderPixels) {
        bytes = Self.encode(width: pixels.width, height: pixels.height, rgba: pixels.rgba)
    }

    /// Reads ThumbHash bytes.
    /// - Throws: ``PlaceholderError/invalidHash(reason:)`` when they are too short for the
    ///   components their header announces.
    public init(bytes: [UInt8]) throws(PlaceholderError) {
        guard bytes.count >= 5 else { throw .invalidHash(reason: "a ThumbHash has at least 5 bytes, not \(bytes.count)") }
        let header = Header(bytes)
        guard bytes.count >= header.byteCount else {
            throw .invalidHash(reason: "this ThumbHash needs \(header.byteCount) bytes, not \(bytes.count)")
        }
        self.bytes = bytes
    }

    /// Reads a ThumbHash from base64 (standard alphabet; padding optional).
    /// - Throws: ``PlaceholderError/invalidHash(reason:)``.
    public init(base64: String) throws(PlaceholderError) {
        var text = base64
        while text.count % 4 != 0 { text += "=" }
        guard let data = Data(base64Encoded: text) else { throw .invalidHash(reason: "not base64") }
        try self.init(bytes: [UInt8](data))
    }

    /// The bytes in standard base64 with padding, as pages and imgproxy-style JSON carry them.
    public var base64: String { Data(bytes).base64EncodedString() }

    /// The hash in base64.
    public var description: String { base64 }

    /// The image's approximate aspect ratio (width / height), as the hash stores it.
    public var approximateAspectRatio: Double {
        let header = Header(bytes)
        return header.storedLY == 0 ? 1 : Double(header.storedLX) / Double(header.storedLY)
    }

    /// The average colour, straight alpha, each channel 0–1 (evanw's `thumbHashToAverageRGBA`).
    public var averageRGBA: (red: Double, green: Double, blue: Double, alpha: Double) {
        let header = Header(bytes)
        let (r, g, b) = Self.rgb(l: header.lDC, p: header.pDC, q: header.qDC)
        return (max(0, min(1, r)), max(0, min(1, g)), max(0, min(1, b)), header.aDC)
    }

    /// ``averageRGBA`` as 8-bit channels (rounded).
    public var averageColor: PixelColor {
        let (r, g, b, a) = averageRGBA
        func byte(_ value: Double) -> UInt8 { UInt8((value * 255).rounded()) }
        return PixelColor(red: byte(r), green: byte(g), blue: byte(b), alpha: byte(a))
    }

    /// Draws the placeholder as evanw's `thumbHashToRGBA` does: at most 32 pixels on its longer
    /// side, in the stored aspect ratio, ``PixelFormat/rgba8`` with straight alpha.
    /// - Throws: ``ImageCodingError`` when it cannot be allocated.
    public func image() throws -> Image {
        let header = Header(bytes)
        var index = 0
        func channel(_ nx: Int, _ ny: Int, _ scale: Double) -> [Double] {
            var ac: [Double] = []
            for cy in 0..<ny {
                var cx = cy == 0 ? 1 : 0
                while cx * ny < nx * (ny - cy) {
                    let byte = bytes[header.acStart + (index >> 1)]
                    ac.append((Double((byte >> ((index & 1) << 2)) & 15) / 7.5 - 1) * scale)
                    index += 1
                    cx += 1
                }
            }
            return ac
        }
        let lAC = channel(header.lx, header.ly, header.lScale)
        let pAC = channel(3, 3, header.pScale * 1.25)
        let qAC = channel(3, 3, header.qScale * 1.25)
        let aAC = header.hasAlpha ? channel(5, 5, header.aScale) : []
        let ratio = approximateAspectRatio
        let width = max(1, Self.round(ratio > 1 ? 32 : 32 * ratio))
        let height = max(1, Self.round(ratio > 1 ? 32 / ratio : 32))
        var rgba = [UInt8](repeating: 0, count: width * height * 4)
        let nx = max(header.lx, header.hasAlpha ? 5 : 3), ny = max(header.ly, header.hasAlpha ? 5 : 3)
        var fx = [Double](repeating: 0, count: nx), fy = [Double](repeating: 0, count: ny)
        for y in 0..<height {
            for x in 0..<width {
                var (l, p, q, a) = (header.lDC, header.pDC, header.qDC, header.aDC)
                for cx in 0..<nx { fx[cx] = JavaScriptMath.cos(Double.pi / Double(width) * (Double(x) + 0.5) * Double(cx)) }
                for cy in 0..<ny { fy[cy] = JavaScriptMath.cos(Double.pi / Double(height) * (Double(y) + 0.5) * Double(cy)) }
                var j = 0
                for cy in 0..<header.ly {
                    var cx = cy == 0 ? 1 : 0
                    let fy2 = fy[cy] * 2
                    while cx * header.ly < header.lx * (header.ly - cy) {
                        l += lAC[j] * fx[cx] * fy2
                        j += 1
                        cx += 1
                    }
                }
                j = 0
                for cy in 0..<3 {
                    let fy2 = fy[cy] * 2
                    for cx in (cy == 0 ? 1 : 0)..<(3 - cy) {
                        let f = fx[cx] * fy2
                        p += pAC[j] * f
                        q += qAC[j] * f
                        j += 1
                    }
                }
                if header.hasAlpha {
                    j = 0
                    for cy in 0..<5 {
                        let fy2 = fy[cy] * 2
                        for cx in (cy == 0 ? 1 : 0)..<(5 - cy) {
                            a += aAC[j] * fx[cx] * fy2
                            j += 1
                        }
                    }
                }
                let (r, g, b) = Self.rgb(l: l, p: p, q: q)
                let pixel = (y * width + x) * 4
                rgba[pixel] = Self.byte(r)
                rgba[pixel + 1] = Self.byte(g)
                rgba[pixel + 2] = Self.byte(b)
                rgba[pixel + 3] = Self.byte(a)
            }
        }
        return try Image(width: width, height: height, pixelFormat: .rgba8, pixels: rgba)
    }

    // MARK: The reference's arithmetic

    /// What the first 5 or 6 bytes say.
    struct Header {
        var lDC, pDC, qDC, lScale, pScale, qScale, aDC, aScale: Double
        var hasAlpha: Bool
        /// Luminance components per axis as stored (their ratio is the aspect ratio).
        var storedLX, storedLY: Int
        /// Luminance components per axis as decoded (at least 3).
        var lx, ly: Int
        var acStart: Int
        /// Bytes the whole hash needs.
        var byteCount: Int

        init(_ hash: [UInt8]) {
            let header24 = Int(hash[0]) | Int(hash[1]) << 8 | Int(hash[2]) << 16
            let header16 = Int(hash[3]) | Int(hash[4]) << 8
            lDC = Double(header24 & 63) / 63
            pDC = Double((header24 >> 6) & 63) / 31.5 - 1
            qDC = Double((header24 >> 12) & 63) / 31.5 - 1
            lScale = Double((header24 >> 18) & 31) / 31
            hasAlpha = header24 >> 23 != 0
            pScale = Double((header16 >> 3) & 63) / 63
            qScale = Double((header16 >> 9) & 63) / 63
            let isLandscape = header16 >> 15 != 0
            storedLX = isLandscape ? (hasAlpha ? 5 : 7) : header16 & 7
            storedLY = isLandscape ? header16 & 7 : (hasAlpha ? 5 : 7)
            acStart = hasAlpha ? 6 : 5
            aDC = hasAlpha && hash.count > 5 ? Double(hash[5] & 15) / 15 : 1
            aScale = hash.count > 5 ? Double(hash[5] >> 4) / 15 : 0
            // The decoder reads at least 3 components per axis of luminance.
            lx = max(3, storedLX)
            ly = max(3, storedLY)
            var count = Self.acCount(lx, ly) + 2 * Self.acCount(3, 3)
            if hasAlpha { count += Self.acCount(5, 5) }
            byteCount = acStart + (count + 1) / 2
        }

        /// The varying components of an `nx × ny` channel (the triangle the encoder keeps, less DC).
        static func acCount(_ nx: Int, _ ny: Int) -> Int {
            var count = 0
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) { count += 1; cx += 1 }
            }
            return count - 1
        }
    }

    /// evanw's `rgbaToThumbHash` on `width × height ≤ 100×100` straight-alpha pixels.
    static func encode(width w: Int, height h: Int, rgba: [UInt8]) -> [UInt8] {
        precondition(w > 0 && h > 0 && w <= 100 && h <= 100 && rgba.count >= w * h * 4)
        var avgR = 0.0, avgG = 0.0, avgB = 0.0, avgA = 0.0
        for i in 0..<(w * h) {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            avgR += alpha / 255 * Double(rgba[i * 4])
            avgG += alpha / 255 * Double(rgba[i * 4 + 1])
            avgB += alpha / 255 * Double(rgba[i * 4 + 2])
            avgA += alpha
        }
        if avgA != 0 {
            avgR /= avgA
            avgG /= avgA
            avgB /= avgA
        }
        let hasAlpha = avgA < Double(w * h)
        let lLimit = hasAlpha ? 5.0 : 7.0
        let lx = max(1, Int(round(lLimit * Double(w) / Double(max(w, h)))))
        let ly = max(1, Int(round(lLimit * Double(h) / Double(max(w, h)))))
        var l = [Double](repeating: 0, count: w * h), p = l, q = l, a = l
        for i in 0..<(w * h) {
            let alpha = Double(rgba[i * 4 + 3]) / 255
            let r = avgR * (1 - alpha) + alpha / 255 * Double(rgba[i * 4])
            let g = avgG * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 1])
            let b = avgB * (1 - alpha) + alpha / 255 * Double(rgba[i * 4 + 2])
            l[i] = (r + g + b) / 3
            p[i] = (r + g) / 2 - b
            q[i] = r - g
            a[i] = alpha
        }
        func encodeChannel(_ channel: [Double], _ nx: Int, _ ny: Int) -> (dc: Double, ac: [Double], scale: Double) {
            var dc = 0.0, ac: [Double] = [], scale = 0.0
            var fx = [Double](repeating: 0, count: w)
            for cy in 0..<ny {
                var cx = 0
                while cx * ny < nx * (ny - cy) {
                    var f = 0.0
                    for x in 0..<w { fx[x] = JavaScriptMath.cos(Double.pi / Double(w) * Double(cx) * (Double(x) + 0.5)) }
                    for y in 0..<h {
                        let fy = JavaScriptMath.cos(Double.pi / Double(h) * Double(cy) * (Double(y) + 0.5))
                        for x in 0..<w { f += channel[x + y * w] * fx[x] * fy }
                    }
                    f /= Double(w * h)
                    if cx != 0 || cy != 0 {
                        ac.append(f)
                        scale = max(scale, abs(f))
                    } else {
                        dc = f
                    }
                    cx += 1
                }
            }
            if scale != 0 {
                for i in ac.indices { ac[i] = 0.5 + 0.5 / scale * ac[i] }
            }
            return (dc, ac, scale)
        }
        let lChannel = encodeChannel(l, max(3, lx), max(3, ly))
        let pChannel = encodeChannel(p, 3, 3)
        let qChannel = encodeChannel(q, 3, 3)
        let aChannel = hasAlpha ? encodeChannel(a, 5, 5) : (dc: 0, ac: [], scale: 0)
        let isLandscape = w > h
        let header24 = round(63 * lChannel.dc) | (round(31.5 + 31.5 * pChannel.dc) << 6) | (round(31.5 + 31.5 * qChannel.dc) << 12)
            | (round(31 * lChannel.scale) << 18) | ((hasAlpha ? 1 : 0) << 23)
        let header16 = (isLandscape ? ly : lx) | (round(63 * pChannel.scale) << 3) | (round(63 * qChannel.scale) << 9)
            | ((isLandscape ? 1 : 0) << 15)
        var hash = [header24 & 255, (header24 >> 8) & 255, header24 >> 16, header16 & 255, header16 >> 8]
        let acStart = hasAlpha ? 6 : 5
        var acIndex = 0
        if hasAlpha { hash.append(round(15 * aChannel.dc) | (round(15 * aChannel.scale) << 4)) }
        for ac in hasAlpha ? [lChannel.ac, pChannel.ac, qChannel.ac, aChannel.ac] : [lChannel.ac, pChannel.ac, qChannel.ac] {
            for f in ac {
                let slot = acStart + (acIndex >> 1)
                if slot == hash.count { hash.append(0) }
                hash[slot] |= round(15 * f) << ((acIndex & 1) << 2)
                acIndex += 1
            }
        }
        return hash.map { UInt8(truncatingIfNeeded: $0) }
    }

    /// JavaScript's `Math.round`, as an integer.
    static func round(_ value: Double) -> Int {
        Int(JavaScriptMath.round(value))
    }

    /// LPQ back to RGB.
    static func rgb(l: Double, p: Double, q: Double) -> (Double, Double, Double) {
        let b = l - 2 / 3 * p
        let r = (3 * l - b + q) / 2
        return (r, r - q, b)
    }

    /// A channel 0–1 as a byte, as the reference's `Uint8Array` store truncates it.
    static func byte(_ value: Double) -> UInt8 {
        UInt8(max(0, 255 * min(1, value)))
    }
}
