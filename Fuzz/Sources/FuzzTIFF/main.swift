import Foundation
import FuzzSupport
import WebImage
import WebImageTIFF

// fuzz-tiff: TIFFCoder (libtiff behind CTIFF): page 0 or page 1, orientation applied or not, full size or
// a 64×64 thumbnail, under a 4 MP limit (libtiff's own allocations capped by the shim).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: 4 << 20)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    options.applyOrientation = control.bool()
    if control.bool() { options.page = 1 }
    options.keepsHighBitDepth = control.bool()
    _ = decodeOutcome { try TIFFCoder().decode(data, options: options) }
    return 0
}

@_cdecl("FuzzTIFF_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
