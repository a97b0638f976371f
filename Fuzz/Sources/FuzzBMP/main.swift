import Foundation
import FuzzSupport
import WebImage

// fuzz-bmp: the hand-written BMP and ICO/CUR decoders (WebImage's own parsers facing the internet), full
// size or a 64×64 thumbnail, the largest icon entry or the one nearest 16 pixels; then what decoded is
// encoded as BMP and ICO again and decoded back to the same size.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    var control = FuzzControl(data)
    var options = DecodeOptions(pixelCountLimit: 16 << 20)
    if control.bool() { options.thumbnailPixelSize = PixelSize(width: 64, height: 64) }
    if control.bool() { options.iconSide = 16 }
    for coder in [BMPCoder() as any ImageCoder, ICOCoder()] {
        guard case .success(let image) = decodeOutcome({ try coder.decode(data, options: options) }) else { continue }
        for format in [ImageFormat.bmp, .ico] {
            guard let encoded = try? CoderRegistry.shared.encode(image, as: format) else { fatalError("\(format) cannot re-encode \(image.size)") }
            guard let back = try? CoderRegistry.shared.decode(encoded) else { fatalError("\(format) round trip of \(image.size) failed") }
            if format == .bmp, back.size != image.size { fatalError("BMP round trip changed \(image.size) to \(back.size)") }
        }
    }
    return 0
}

@_cdecl("FuzzBMP_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
