/// How a stored bitmap must be turned to be displayed upright: the eight values of the EXIF/TIFF
/// `Orientation` tag (raw values 1–8).
///
/// A decoder that applies orientation (``DecodeOptions/applyOrientation``, the default) returns pixels
/// already turned, with orientation ``up``; otherwise it returns the stored pixels and the orientation
/// the file declared, and ``Image/oriented()`` applies it later.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable {
    /// 1: stored upright.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: turned 180°.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored across the main diagonal (transposed).
    case leftMirrored = 5
    /// 6: must be turned 90° clockwise to display.
    case right = 6
    /// 7: mirrored across the anti-diagonal (transversed).
    case rightMirrored = 7
    /// 8: must be turned 90° counter-clockwise to display.
    case left = 8

    /// Creates the orientation for an EXIF `Orientation` value; 0, missing or out-of-range values
    /// mean ``up``, as every reader of the tag treats them.
    public init(exifValue: Int) {
        self = ImageOrientation(rawValue: exifValue) ?? .up
    }

    /// Whether displaying the image swaps its width and height (orientations 5–8).
    public var swapsDimensions: Bool { rawValue >= 5 }
}
