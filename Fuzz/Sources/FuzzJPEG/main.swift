import Foundation
import FuzzSupport
import WebImage

// fuzz-jpeg: JPEGCoder full decode, 64×64 thumbnail decode (DCT scaling + resample, orientation
// applied or not), and an incremental decode in chunks the input's tail chooses, with either set
// of options (and a few partial images on the way). The final incremental image must equal the
// full decode with the same options unless WEBIMAGE_FUZZ_DIFFERENTIAL=0.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    let coder = JPEGCoder()

    let fullOptions = DecodeOptions(pixelCountLimit: fuzzPixelCountLimit)
    let full = decodeOutcome { try coder.decode(data, options: fullOptions) }

    var thumbnailOptions = DecodeOptions(thumbnailPixelSize: PixelSize(width: 64, height: 64),
                                         pixelCountLimit: fuzzPixelCountLimit)
    thumbnailOptions.preservesAspectRatio = control.bool()
    thumbnailOptions.applyOrientation = control.bool()
    let thumbnail = decodeOutcome { try coder.decode(data, options: thumbnailOptions) }
    if case .success(let image) = thumbnail {
        precondition(image.width <= 64 && image.height <= 64, "thumbnail \(image.size) does not fit 64×64")
    }

    let useThumbnail = control.bool()
    let options = useThumbnail ? thumbnailOptions : fullOptions
    let incremental = decodeIncrementally(coder, data, options: options, control: &control)
    checkSameOutcome(full: useThumbnail ? thumbnail : full, incremental: incremental, context: "JPEG \(options)")
    return 0
}

@_cdecl("FuzzJPEG_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
