import Foundation
import FuzzSupport
import WebImage
import WebImageHEIF

// fuzz-heif: HEIFCoder full decode of the primary image (orientation applied or not; full size or a
// 64×64 thumbnail). libheif has no incremental decoding, so there is no differential check.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: 4 << 20)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    options.applyOrientation = control.bool()
    _ = decodeOutcome { try HEIFCoder().decode(data, options: options) }
    return 0
}

@_cdecl("FuzzHEIF_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
