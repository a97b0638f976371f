import Foundation
import FuzzSupport
import WebImage

// fuzz-png: PNGCoder full decode, and the same bytes through the incremental decoder in chunks the
// input's tail chooses (with a few partial images on the way). The final incremental image must
// equal the full decode (the IncrementalDecoder contract) unless WEBIMAGE_FUZZ_DIFFERENTIAL=0.
// Half the inputs decode as 64×64 thumbnails (the resampler), half at full size; half keep 16 bits
// (DecodeOptions.keepsHighBitDepth: the 16-bit rows, resampler and APNG fallback).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: fuzzPixelCountLimit)
    if control.bool() {
        options.thumbnailPixelSize = PixelSize(width: 64, height: 64)
        options.preservesAspectRatio = control.bool()
    }
    options.keepsHighBitDepth = control.bool()
    let coder = PNGCoder()
    let full = decodeOutcome { try coder.decode(data, options: options) }
    let incremental = decodeIncrementally(coder, data, options: options, control: &control)
    checkSameOutcome(full: full, incremental: incremental, context: "PNG \(options)")
    return 0
}

@_cdecl("FuzzPNG_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
