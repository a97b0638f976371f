import CFuzzDriver
import Foundation

/// The signature libFuzzer calls for each input.
public typealias FuzzCallback = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer's driver (argument parsing, corpus, mutation loop) with `callback` as the target.
///
/// Each fuzzer's `<Module>_main` calls this: SwiftPM links executables with
/// `--defsym main=<Module>_main`, so the target, not libFuzzer's own `main`, owns the entry point.
public func runFuzzer(
    argc: CInt, argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, callback: FuzzCallback
) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv, callback)
}

/// The input as `Data` over libFuzzer's own buffer, without copying: libFuzzer allocates exactly
/// `count` bytes, so a read one byte past the input lands in ASan's redzone and is reported.
/// (Foundation copies inputs of up to 14 bytes into inline storage; those lose that precision.)
public func fuzzInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Data {
    guard let bytes, count > 0 else { return Data() }
    return Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes), count: count, deallocator: .none)
}

/// Whether the differential checks (incremental decode == full decode) are on: they are unless the
/// environment sets `WEBIMAGE_FUZZ_DIFFERENTIAL=0`.
public let differentialChecksEnabled: Bool = ProcessInfo.processInfo.environment["WEBIMAGE_FUZZ_DIFFERENTIAL"] != "0"
