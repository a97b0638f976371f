import Foundation
import FuzzSupport
@testable import WebImage

// fuzz-exif: the EXIF Orientation reader on hostile bytes: the whole input as a JPEG file, as an
// APP1 payload and as a TIFF structure. It must never crash or loop, and whatever it returns must
// be a valid EXIF orientation (1...8) or nothing.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let buffer = UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count)
    let orientation = EXIFOrientationReader.orientation(inJPEG: buffer)
    precondition((1...8).contains(orientation.rawValue), "orientation \(orientation.rawValue)")
    precondition(EXIFOrientationReader.orientation(inJPEG: Array(buffer)) == orientation, "array overload differs")

    if let value = EXIFOrientationReader.orientationValue(inTIFF: buffer) {
        blackHole(ImageOrientation(exifValue: value))
    }
    if let value = EXIFOrientationReader.orientationValue(inEXIFSegment: buffer) {
        blackHole(ImageOrientation(exifValue: value))
    }
    return 0
}

@_cdecl("FuzzEXIF_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
