import Foundation

/// A decoded bitmap: immutable, thread-safe, and cheap to share.
///
/// Pixels are stored top row first, each row ``bytesPerRow`` bytes long (at least
/// `width × pixelFormat.bytesPerPixel`), channels interleaved in the order ``pixelFormat`` names.
/// Read them without copying through ``withUnsafePixels(_:)`` or ``withUnsafeRow(_:_:)``, or as
/// ``pixels`` (a `Data` that shares the image's memory).
///
/// An animated image holds its first frame as itself and every frame in ``frames``: each frame is the
/// whole canvas after compositing (disposal and blending applied, as a browser shows it) with its own
/// duration, and the image has a ``loopCount``. ``cost`` counts every frame.
public final class Image: Sendable {
    /// The width in pixels (at least 1).
    public let width: Int
    /// The height in pixels (at least 1).
    public let height: Int
    /// The layout of each pixel.
    public let pixelFormat: PixelFormat
    /// The number of bytes from the start of one row to the start of the next.
    public let bytesPerRow: Int
    /// The format the image was decoded from (``ImageFormat/unknown`` for images made in memory).
    public let format: ImageFormat
    /// Pixels per point, as in SDWebImage's `scale` (`@2x` images have 2). Default 1.
    public let scale: Double
    /// How the stored pixels must be turned to display upright; ``ImageOrientation/up`` once applied.
    public let orientation: ImageOrientation

    let storage: PixelStorage
    /// The pixels as `Data`, made once: handing out copies of this value means a caller that
    /// writes to its copy gets its own bytes (copy on write) instead of changing the image's.
    private let pixelData: Data
    /// Frames after the first, for animated images; empty for still images.
    let laterFrames: [ImageFrame]
    /// How long the first frame shows in an animation.
    let firstFrameDuration: Duration
    /// The first frame's delay as the file stores it.
    let firstFrameStoredDuration: Duration
    /// How many times an animation plays: 0 means forever (GIF's NETSCAPE loop count, APNG's
    /// `num_plays`, WebP's loop count); 1 for a GIF without a loop extension, which plays once, as
    /// browsers and SDWebImage do. 0 for still images.
    public let loopCount: Int

    /// Wraps pixels a decoder has written into `storage`. Internal: callers guarantee the geometry.
    init(
        storage: PixelStorage, width: Int, height: Int, pixelFormat: PixelFormat, bytesPerRow: Int,
        format: ImageFormat = .unknown, scale: Double = 1, orientation: ImageOrientation = .up,
        laterFrames: [ImageFrame] = [], firstFrameDuration: Duration = .zero, firstFrameStoredDuration: Duration? = nil,
        loopCount: Int = 0
    ) {
        precondition(width > 0 && height > 0 && bytesPerRow >= width * pixelFormat.bytesPerPixel)
        precondition(storage.capacity >= bytesPerRow * height)
        self.storage = storage
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.bytesPerRow = bytesPerRow
        self.format = format
        self.scale = scale
        self.orientation = orientation
        self.laterFrames = laterFrames
        self.firstFrameDuration = firstFrameDuration
        self.firstFrameStoredDuration = firstFrameStoredDuration ?? firstFrameDuration
        self.loopCount = loopCount
        pixelData = Data(bytesNoCopy: storage.bytes, count: bytesPerRow * height, deallocator: .custom { _, _ in
            withExtendedLifetime(storage) {}
        })
    }

    /// Creates an image from pixels in memory (copied), tightly packed unless `bytesPerRow` says otherwise.
    ///
    /// - Parameters:
    ///   - width: the width in pixels, at least 1.
    ///   - height: the height in pixels, at least 1.
    ///   - pixelFormat: the layout of each pixel.
    ///   - pixels: the pixel bytes, top row first; at least `bytesPerRow × height` of them.
    ///   - bytesPerRow: the row stride in `pixels`; default (`nil`) `width × bytesPerPixel`.
    ///   - format: the source format to record; default ``ImageFormat/unknown``.
    ///   - scale: pixels per point; default 1.
    ///   - orientation: how the pixels must be turned to display; default ``ImageOrientation/up``.
    /// - Throws: ``ImageCodingError/invalidImage(_:)`` if the sizes are not positive or `pixels` is
    ///   too short; ``ImageCodingError/insufficientMemory(byteCount:)`` if memory runs out.
    public convenience init<Bytes: Collection<UInt8>>(
        width: Int, height: Int, pixelFormat: PixelFormat, pixels: Bytes, bytesPerRow: Int? = nil,
        format: ImageFormat = .unknown, scale: Double = 1, orientation: ImageOrientation = .up
    ) throws(ImageCodingError) {
        let packed = width.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        guard width > 0, height > 0, !packed.overflow else {
            throw .invalidImage("an image needs a positive width and height, not \(width)x\(height)")
        }
        let stride = bytesPerRow ?? packed.partialValue
        let total = stride.multipliedReportingOverflow(by: height)
        guard stride >= packed.partialValue, !total.overflow, pixels.count >= total.partialValue else {
            throw .invalidImage("\(pixels.count) bytes cannot hold \(width)x\(height) \(pixelFormat) pixels with \(stride) bytes per row")
        }
        let rowBytes = packed.partialValue
        let storage = try PixelStorage(byteCount: rowBytes * height)
        let target = UnsafeMutableRawBufferPointer(start: storage.bytes, count: rowBytes * height)
        let copied: Void? = pixels.withContiguousStorageIfAvailable { source in
            for y in 0..<height {
                let row = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(source)[(y * stride)..<(y * stride + rowBytes)])
                UnsafeMutableRawBufferPointer(rebasing: target[(y * rowBytes)..<((y + 1) * rowBytes)]).copyMemory(from: row)
            }
        }
        if copied == nil {
            let array = Array(pixels)
            array.withUnsafeBytes { source in
                for y in 0..<height {
                    let row = UnsafeRawBufferPointer(rebasing: source[(y * stride)..<(y * stride + rowBytes)])
                    UnsafeMutableRawBufferPointer(rebasing: target[(y * rowBytes)..<((y + 1) * rowBytes)]).copyMemory(from: row)
                }
            }
        }
        self.init(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: rowBytes,
                  format: format, scale: scale, orientation: orientation)
    }

    /// Creates an image whose pixels `fill` writes in place, without a copy: the way a coder of its own
    /// (over a C library) hands decoded pixels over.
    ///
    /// - Parameters:
    ///   - width: the width in pixels, at least 1.
    ///   - height: the height in pixels, at least 1.
    ///   - pixelFormat: the layout of each pixel.
    ///   - format: the source format to record; default ``ImageFormat/unknown``.
    ///   - scale: pixels per point; default 1.
    ///   - orientation: how the pixels must be turned to display; default ``ImageOrientation/up``.
    ///   - fill: writes every row (tightly packed, `width × bytesPerPixel` bytes each) into the buffer
    ///     it is given, with that row stride; the buffer's initial content is unspecified.
    /// - Throws: ``ImageCodingError/invalidImage(_:)`` for a non-positive size,
    ///   ``ImageCodingError/insufficientMemory(byteCount:)``, or what `fill` throws.
    public convenience init(width: Int, height: Int, pixelFormat: PixelFormat, format: ImageFormat = .unknown,
                            scale: Double = 1, orientation: ImageOrientation = .up,
                            fillingPixels fill: (_ pixels: UnsafeMutableRawBufferPointer, _ bytesPerRow: Int) throws -> Void) throws {
        let (rowBytes, rowOverflow) = width.multipliedReportingOverflow(by: pixelFormat.bytesPerPixel)
        let (total, totalOverflow) = rowBytes.multipliedReportingOverflow(by: max(height, 0))
        guard width > 0, height > 0, !rowOverflow, !totalOverflow else {
            throw ImageCodingError.invalidImage("an image needs a positive width and height, not \(width)x\(height)")
        }
        let storage = try PixelStorage(byteCount: total)
        try fill(UnsafeMutableRawBufferPointer(start: storage.bytes, count: total), rowBytes)
        self.init(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: rowBytes,
                  format: format, scale: scale, orientation: orientation)
    }

    /// Creates an animated image from its composited frames: the first frame's pixels, format, scale and
    /// orientation become the image's, the others its later frames.
    ///
    /// - Parameters:
    ///   - frames: at least one; every frame should have the first one's size and pixel format.
    ///   - loopCount: how many times the animation plays, 0 meaning forever; default 0.
    /// - Throws: ``ImageCodingError/invalidImage(_:)`` when `frames` is empty or the frames' sizes differ.
    public convenience init(frames: [ImageFrame], loopCount: Int = 0) throws(ImageCodingError) {
        guard let first = frames.first else { throw .invalidImage("an animation needs at least one frame") }
        guard frames.allSatisfy({ $0.image.size == first.image.size }) else {
            throw .invalidImage("every frame of an animation must have the first frame's size \(first.image.size)")
        }
        let image = first.image
        self.init(storage: image.storage, width: image.width, height: image.height, pixelFormat: image.pixelFormat,
                  bytesPerRow: image.bytesPerRow, format: image.format, scale: image.scale, orientation: image.orientation,
                  laterFrames: Array(frames.dropFirst()), firstFrameDuration: first.duration,
                  firstFrameStoredDuration: first.storedDuration, loopCount: frames.count > 1 ? loopCount : 0)
    }

    /// This image's pixels (shared, not copied) reporting `orientation` instead: how a coder labels
    /// what it decoded with the orientation its container stores, before ``oriented()`` turns it.
    public func withOrientation(_ orientation: ImageOrientation) -> Image {
        guard orientation != self.orientation else { return self }
        return Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow,
                     format: format, scale: scale, orientation: orientation, laterFrames: laterFrames,
                     firstFrameDuration: firstFrameDuration, firstFrameStoredDuration: firstFrameStoredDuration, loopCount: loopCount)
    }

    /// This image's pixels (shared, not copied) reporting `format` instead: how a container coder (ICO
    /// around PNG) labels what another coder decoded for it.
    package func withFormat(_ format: ImageFormat) -> Image {
        guard format != self.format else { return self }
        return Image(storage: storage, width: width, height: height, pixelFormat: pixelFormat, bytesPerRow: bytesPerRow,
                     format: format, scale: scale, orientation: orientation, laterFrames: laterFrames,
                     firstFrameDuration: firstFrameDuration, firstFrameStoredDuration: firstFrameStoredDuration, loopCount: loopCount)
    }

    /// The size in pixels.
    public var size: PixelSize { PixelSize(width: width, height: height) }

    /// The memory the image holds, in bytes (all frames, as allocated: a reused buffer may be larger
    /// than the pixels need): what caches count against their cost limits.
    public var cost: Int {
        storage.capacity + laterFrames.reduce(0) { $0 + $1.image.cost }
    }

    /// The pixel bytes (`bytesPerRow × height`), sharing the image's memory rather than copying it.
    /// Writing to the returned value copies it first: the image itself never changes.
    public var pixels: Data { pixelData }

    /// Calls `body` with all pixel bytes (`bytesPerRow × height`), without copying.
    /// The buffer is valid only during the call. Rethrows what `body` throws.
    public func withUnsafePixels<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withExtendedLifetime(storage) { () throws(Failure) -> Result in
            try body(UnsafeRawBufferPointer(start: storage.bytes, count: bytesPerRow * height))
        }
    }

    /// Calls `body` with row `y`'s `width × bytesPerPixel` bytes, without copying.
    /// `y` must be in `0..<height`. Rethrows what `body` throws.
    public func withUnsafeRow<Result, Failure: Error>(
        _ y: Int, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition((0..<height).contains(y), "row \(y) is outside 0..<\(height)")
        return try withExtendedLifetime(storage) { () throws(Failure) -> Result in
            try body(UnsafeRawBufferPointer(start: storage.bytes + y * bytesPerRow, count: width * pixelFormat.bytesPerPixel))
        }
    }

    /// Whether the image has more than one frame.
    public var isAnimated: Bool { !laterFrames.isEmpty }

    /// Every frame, first to last: a still image has one, itself.
    public var frames: [ImageFrame] {
        [ImageFrame(image: self, duration: firstFrameDuration, storedDuration: firstFrameStoredDuration)] + laterFrames
    }

    /// A new image whose first frame has `first`'s pixels and whose later frames are `later`, keeping
    /// this image's timing and loop count; format and scale are `first`'s.
    func replacingFrames(first: Image, later: [ImageFrame]) -> Image {
        Image(storage: first.storage, width: first.width, height: first.height, pixelFormat: first.pixelFormat,
              bytesPerRow: first.bytesPerRow, format: first.format, scale: first.scale, orientation: first.orientation,
              laterFrames: later, firstFrameDuration: firstFrameDuration, firstFrameStoredDuration: firstFrameStoredDuration,
              loopCount: loopCount)
    }
}

/// One frame of an animated ``Image``.
public struct ImageFrame: Sendable {
    /// The frame's pixels, composed to the full canvas size.
    public let image: Image
    /// How long the frame shows; `.zero` for still images. For GIF, delays under 20 ms show for 100 ms,
    /// as browsers play them.
    public let duration: Duration
    /// The delay as the file stores it (a GIF's 0 or 10 ms, before the browser rule above).
    public let storedDuration: Duration

    /// ``storedDuration`` in whole milliseconds, rounded down (negative durations count as 0): the
    /// unit encoders of animated formats write.
    public var storedMilliseconds: Int {
        let (seconds, attoseconds) = storedDuration.components
        return max(0, Int(clamping: seconds) &* 1000 &+ Int(attoseconds / 1_000_000_000_000_000))
    }

    /// Creates a frame that shows `image` for `duration`.
    /// - Parameter storedDuration: the delay the file stores; default (`nil`) `duration`.
    public init(image: Image, duration: Duration, storedDuration: Duration? = nil) {
        self.image = image
        self.duration = duration
        self.storedDuration = storedDuration ?? duration
    }
}
