import Foundation
import FuzzSupport
import WebImage
import WebImageWebP

// fuzz-webp: WebPCoder full decode (still, or every frame of an animation under a small budget; at
// full size or a 64×64 thumbnail scaled on load, orientation applied or not) and the incremental
// decoder (WebPIDecoder) in chunks the input's tail chooses, whose finish must equal the full decode
// unless WEBIMAGE_FUZZ_DIFFERENTIAL=0.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: fuzzPixelCountLimit, maxFrameCount: 64, maxAnimationByteCount: 64 << 20)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    options.applyOrientation = control.bool()
    options.firstFrameOnly = control.next() % 4 == 0
    let coder = WebPCoder()
    let full = decodeOutcome { try coder.decode(data, options: options) }
    let incremental = decodeIncrementally(coder, data, options: options, control: &control)
    checkSameOutcome(full: full, incremental: incremental, context: "WebP \(options)")
    return 0
}

@_cdecl("FuzzWebP_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
