import Foundation
import FuzzSupport
import WebImage
import WebImageSVG

// fuzz-svg: the SVG sanitiser (libxml2 behind CSVG): every refusal is an ImageCodingError, and what it keeps
// sanitises to the same bytes again (nothing it lets through is something it would remove). Rendering
// (rsvg-convert in a child process) is not fuzzed here: a process per input is too slow for libFuzzer.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    do {
        let clean = try SVGCoder.sanitize(data)
        guard let again = try? SVGCoder.sanitize(clean) else { fatalError("the sanitised document is refused when sanitised again") }
        if again != clean { fatalError("sanitising is not idempotent") }
    } catch is ImageCodingError {
    } catch {
        fatalError("an untyped error: \(error)")
    }
    return 0
}

@_cdecl("FuzzSVG_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
