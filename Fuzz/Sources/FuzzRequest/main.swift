import Foundation
import FuzzSupport
@testable import WebImage
@testable import WebImageServer

// fuzz-request: whole imgproxy request paths as `webimage serve` reads them (the input decoded
// leniently as UTF-8): ProcessingPath (the repair, the signature split, the source), then
// ProcessingRequest (every option, presets with a loop among them), then the plan and a run of the
// ProcessingTransformer on a small image. What must hold: never a crash or a hang; every failure is
// one of the parser's typed errors; an accepted request has an output size that is positive and
// within the transformer's limit, or the transformer refuses it with ImageTransformError.

let presets: [String: [String]] = ["thumb": ["rs:fill:64:64", "g:sm"], "loop": ["pr:loop"], "big": ["w:1000", "pr:thumb"]]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    // Made per input: images held in globals at exit are reported by LeakSanitizer.
    let image = try! Image(width: 24, height: 16, pixelFormat: .rgba8,
                           pixels: (0..<(24 * 16 * 4)).map { UInt8(truncatingIfNeeded: $0 &* 37) })
    let watermark = try! WatermarkImage(image: try! Image(width: 5, height: 3, pixelFormat: .rgb8, pixels: [UInt8](repeating: 200, count: 45)))
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : count), as: UTF8.self)
    let path: ProcessingPath
    do {
        path = try ProcessingPath(path: text)
    } catch {
        return 0
    }
    precondition(path.signedPath.hasPrefix("/"), "the signed path \(path.signedPath.debugDescription) does not start with /")
    let request: ProcessingRequest
    do {
        request = try ProcessingRequest(path: path, presets: presets, allowsSecurityOptions: true)
    } catch is ProcessingPath.Invalid {
        return 0
    } catch is ProcessingRequest.Forbidden {
        return 0
    } catch is ProcessingRequest.Expired {
        return 0
    } catch {
        preconditionFailure("an untyped parser error: \(error)")
    }
    let options = request.processing
    let plan = ProcessingPlan(source: image.size, options: options)
    let output = plan.outputSize(options: options)
    let transformer = ProcessingTransformer(options: options, watermark: watermark, maxOutputPixelCount: 1 << 20)
    do {
        let result = try transformer.transform(image, forKey: "")
        precondition(result.width > 0 && result.height > 0 && result.width * result.height <= 1 << 20, "result \(result.size)")
        if options.trim == nil {
            precondition(result.size == output, "the plan said \(output), the transformer made \(result.size) for \(options.key)")
        }
    } catch is ImageTransformError {
        return 0
    } catch {
        preconditionFailure("an untyped transform error: \(error)")
    }
    _ = VariantParameters(request: request, accept: "image/jxl,image/avif,image/webp", formats: FormatPolicy(negotiates: true), watermark: watermark)
    return 0
}

@_cdecl("FuzzRequest_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
