import Foundation

/// The orientation a PNG's `eXIf` chunk stores, and the step that applies it.
///
/// Browsers (Chrome, Safari, Firefox) turn a PNG by its `eXIf` Orientation and ignore XMP, so
/// WebImage does the same: a `tiff:Orientation` inside an `iTXt` XMP packet is not read (Pillow's
/// `exif_transpose` reads it; a thumbnail turned by it would disagree with what browsers show of the
/// original). Only chunks before the first `IDAT` count, as the PNG specification requires of `eXIf`.
enum PNGEXIFReader {
    /// The orientation of the `eXIf` chunk before the first `IDAT`, or ``ImageOrientation/up``.
    static func orientation(inPNG png: UnsafeRawBufferPointer) -> ImageOrientation {
        var offset = 8
        while offset + 8 <= png.count {
            let length = Int(png[offset]) << 24 | Int(png[offset + 1]) << 16 | Int(png[offset + 2]) << 8 | Int(png[offset + 3])
            let type = (png[offset + 4], png[offset + 5], png[offset + 6], png[offset + 7])
            let start = offset + 8
            guard length >= 0, start + length <= png.count else { return .up }
            switch type {
            case (0x65, 0x58, 0x49, 0x66):   // eXIf
                let value = EXIFOrientationReader.orientationValue(inTIFF: UnsafeRawBufferPointer(rebasing: png[start..<(start + length)]))
                return value.map(ImageOrientation.init(exifValue:)) ?? .up
            case (0x49, 0x44, 0x41, 0x54), (0x49, 0x45, 0x4E, 0x44):   // IDAT, IEND
                return .up
            default:
                offset = start + length + 4
            }
        }
        return .up
    }

    /// `image` labelled with the file's `orientation` (from ``orientation(inPNG:)``) and, when `options`
    /// say so, turned upright; then fitted to the size `options` ask for.
    /// - Throws: ``ImageCodingError/insufficientMemory(byteCount:)`` from turning or resizing.
    static func finished(_ image: Image, orientation: ImageOrientation, options: DecodeOptions) throws(ImageCodingError) -> Image {
        var result = image.withOrientation(orientation)
        if options.applyOrientation { result = try result.oriented() }
        return try Resampler.fitted(result, options: options)
    }
}
