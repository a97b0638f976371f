import Foundation
import FuzzSupport
import WebImage
import WebImageAVIF

// fuzz-avif: AVIFCoder full decode (the primary image, or every frame of a sequence under a small
// budget; orientation (clap/irot/imir) applied or not; full size or a 64×64 thumbnail). libavif has
// no incremental decoder here, so there is no differential check.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: 4 << 20, maxFrameCount: 16, maxAnimationByteCount: 64 << 20)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    options.applyOrientation = control.bool()
    options.firstFrameOnly = control.bool()
    _ = decodeOutcome { try AVIFCoder().decode(data, options: options) }
    return 0
}

@_cdecl("FuzzAVIF_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
