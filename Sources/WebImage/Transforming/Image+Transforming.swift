import Foundation

extension Image {
    /// Applies `body` to the upright first frame and, for an animated image, to every later frame,
    /// keeping the frame durations. Every built-in transformer goes through here, so they all work
    /// on what a viewer shows (an image whose ``orientation`` is not up is turned upright first).
    func transformingFrames(_ body: (Image) throws -> Image) throws -> Image {
        let first = try body(try Self.upright(self))
        guard !laterFrames.isEmpty else { return first }
        let later = try laterFrames.map { frame in
            ImageFrame(image: try body(try Self.upright(frame.image)), duration: frame.duration, storedDuration: frame.storedDuration)
        }
        return replacingFrames(first: first, later: later)
    }

    /// This image with `source`'s ``format`` and ``scale`` (the pixels, orientation and frames are
    /// this image's own, shared, not copied): what ``ImageTransformer/preservesImageMetadata`` keeps.
    /// Returns `self` when both already match.
    func keepingMetadata(of source: Image) -> Image {
        guard format != source.format || scale != source.scale else { return self }
        return Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow,
                     format: source.format, scale: source.scale, orientation: orientation, laterFrames: laterFrames,
                     firstFrameDuration: firstFrameDuration, firstFrameStoredDuration: firstFrameStoredDuration, loopCount: loopCount)
    }

    /// A new image over `storage` (tightly packed rows of `pixelFormat`) that keeps this image's
    /// source format and scale.
    func derived(storage: PixelStorage, width: Int, height: Int, pixelFormat: PixelFormat) -> Image {
        Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat,
              bytesPerRow: width * pixelFormat.bytesPerPixel, format: format, scale: scale, orientation: .up)
    }

    /// A new image in `format` made row by row: each row is expanded to RGBA (straight alpha),
    /// handed to `body` with its row number to change in place, then packed into `format`.
    func mappingRGBARows(to format: PixelFormat,
                         _ body: (UnsafeMutableBufferPointer<UInt8>, Int) -> Void) throws(ImageTransformError) -> Image {
        let storage = try TransformSupport.allocate(width: width, height: height, format: format)
        let rowBytes = width * format.bytesPerPixel
        var rgba = [UInt8](repeating: 0, count: width * 4)
        rgba.withUnsafeMutableBytes { row in
            for y in 0..<height {
                withUnsafeRow(y) { source in Self.expandToRGBA(source, from: pixelFormat, into: row, width: width) }
                body(row.bindMemory(to: UInt8.self), y)
                Self.packRGBA(UnsafeRawBufferPointer(row),
                              into: UnsafeMutableRawBufferPointer(start: storage.bytes + y * rowBytes, count: rowBytes),
                              as: format, width: width)
            }
        }
        return derived(storage: storage, width: width, height: height, pixelFormat: format)
    }

    /// The upright image moved as `orientation` describes (a flip, a quarter turn...): lossless.
    func moved(as orientation: ImageOrientation) throws(ImageTransformError) -> Image {
        let relabelled = Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat,
                               bytesPerRow: bytesPerRow, format: format, scale: scale, orientation: orientation)
        return try Self.upright(relabelled)
    }

    private static func upright(_ image: Image) throws(ImageTransformError) -> Image {
        do {
            return try image.oriented()
        } catch {
            throw TransformSupport.transformError(error)
        }
    }
}

/// Small helpers shared by the built-in transformers.
enum TransformSupport {
    /// Allocates pixel memory for `width` × `height` pixels of `format`, or throws
    /// ``ImageTransformError/insufficientMemory(byteCount:)`` (also when the size overflows).
    static func allocate(width: Int, height: Int, format: PixelFormat) throws(ImageTransformError) -> PixelStorage {
        let row = width.multipliedReportingOverflow(by: format.bytesPerPixel)
        let total = row.partialValue.multipliedReportingOverflow(by: height)
        guard width > 0, height > 0, !row.overflow, !total.overflow else {
            throw .insufficientMemory(byteCount: .max)
        }
        do {
            return try PixelStorage(byteCount: total.partialValue)
        } catch {
            throw transformError(error)
        }
    }

    /// Maps a pixel error from the image layer to the transformer's error.
    static func transformError(_ error: ImageCodingError) -> ImageTransformError {
        if case .insufficientMemory(let byteCount) = error { return .insufficientMemory(byteCount: byteCount) }
        return .invalidParameter(error.description)
    }

    /// `image` narrowed to 8 bits per channel (itself when it has them): where a transformer that
    /// works on 8-bit samples starts, when it is called directly rather than through the manager.
    static func eightBit(_ image: Image) throws(ImageTransformError) -> Image {
        do { return try image.reducedToEightBits() } catch { throw transformError(error) }
    }

    /// A number as cache keys spell it: six decimals, as SDWebImage's `%f` (`16.000000`).
    static func keyNumber(_ value: Double) -> String {
        String(format: "%.6f", value)
    }

    /// A colour as cache keys and specifications spell it: `#RRGGBBAA` in hexadecimal.
    static func hex(_ color: PixelColor) -> String {
        String(format: "#%02X%02X%02X%02X", color.red, color.green, color.blue, color.alpha)
    }

    /// Rounds and clamps to 0...255.
    @inline(__always)
    static func byte(_ value: Float) -> UInt8 {
        UInt8(min(max(value + 0.5, 0), 255))
    }
}
