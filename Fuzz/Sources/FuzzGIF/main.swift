import Foundation
import FuzzSupport
import WebImage

// fuzz-gif: GIFCoder full decode (every frame, or a 64×64 thumbnail of every frame, under a small
// animation budget so frame bombs are refused cheaply), the same bytes through the incremental
// decoder in chunks the input's tail chooses (its finish must equal the full decode unless
// WEBIMAGE_FUZZ_DIFFERENTIAL=0), and the decoded image encoded again as GIF (the quantizer on
// arbitrary pixels), which must decode to the same size and frame count.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    // A 1 MP canvas and 8 MB of frames: a debug + ASan build resamples a thumbnail of every frame
    // (twice: full and incremental) slowly enough that larger budgets time out on valid work (perf:
    // ASan's allocation bookkeeping inside the resampler; in release the same inputs take < 0.3 s).
    var options = DecodeOptions(pixelCountLimit: 1 << 20, maxFrameCount: 32, maxAnimationByteCount: 8 << 20)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    options.firstFrameOnly = control.next() % 4 == 0
    let coder = GIFCoder()
    let full = decodeOutcome { try coder.decode(data, options: options) }
    let incremental = decodeIncrementally(coder, data, options: options, control: &control)
    checkSameOutcome(full: full, incremental: incremental, context: "GIF \(options)")
    if case .success(let image) = full, image.width * image.height <= 1 << 20 {
        let again = decodeOutcome { try coder.decode(try coder.encode(image, as: .gif)) }
        guard case .success(let decoded) = again else { preconditionFailure("re-encoding a decoded GIF failed: \(again)") }
        precondition(decoded.size == image.size && decoded.frames.count == image.frames.count, "GIF round trip changed the geometry")
    }
    return 0
}

@_cdecl("FuzzGIF_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
