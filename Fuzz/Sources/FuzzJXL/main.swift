import Foundation
import FuzzSupport
import WebImage
import WebImageJXL

// fuzz-jxl: JXLCoder (libjxl behind CJXL): every frame under a 16-frame budget or the first two only,
// orientation applied or not, full size or a 64×64 thumbnail, under a 1 MP limit (libjxl 0.7 aborts on a
// failed allocation, so the size is checked first).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: 1 << 20, maxFrameCount: 16)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    options.applyOrientation = control.bool()
    if control.bool() { options.maxDecodedFrames = 2 }
    _ = decodeOutcome { try JXLCoder().decode(data, options: options) }
    return 0
}

@_cdecl("FuzzJXL_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
