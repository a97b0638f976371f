import Foundation
import FuzzSupport
import WebImage

// fuzz-sniff: ImageFormat(sniffing:) must give one answer for the same bytes however they are held
// (Data, a Data slice with a non-zero startIndex, [UInt8], a DataProtocol of two regions), must look at
// no more than the first 1 KiB, and must agree with the coders' canDecode(_:).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzInput(bytes, count)
    let format = ImageFormat(sniffing: data)
    blackHole((format.description, format.mimeType, format.fileExtension))

    let array = [UInt8](data)
    precondition(ImageFormat(sniffing: array) == format, "[UInt8] sniffed differently from Data")

    var padded = Data([0xA5])
    padded.append(data)
    let slice = padded.dropFirst()
    precondition(slice.startIndex == 1)
    precondition(ImageFormat(sniffing: slice) == format, "a Data slice sniffed differently from Data")

    // Two regions, split where the input's tail says.
    var control = FuzzControl(data)
    let split = count == 0 ? 0 : control.int(in: 0...count)
    let twoRegions = TwoRegionBytes(first: Array(array[..<split]), second: Array(array[split...]))
    precondition(twoRegions.count == count)
    precondition(ImageFormat(sniffing: twoRegions) == format, "two-region bytes sniffed differently from Data")

    precondition(ImageFormat(sniffing: data.prefix(1024)) == format, "sniffing looked past the first 1 KiB")

    precondition(PNGCoder().canDecode(data) == (format == .png), "PNGCoder.canDecode disagrees with sniffing (\(format))")
    precondition(JPEGCoder().canDecode(data) == (format == .jpeg), "JPEGCoder.canDecode disagrees with sniffing (\(format))")
    return 0
}

/// Bytes held in two separate buffers, like DispatchData from a network read. (DispatchData itself
/// leaks its dispatch_data objects on Linux under LeakSanitizer, which would drown real leaks.)
struct TwoRegionBytes: DataProtocol {
    let first: [UInt8]
    let second: [UInt8]

    var regions: [[UInt8]] { [first, second] }
    var startIndex: Int { 0 }
    var endIndex: Int { first.count + second.count }
    subscript(position: Int) -> UInt8 {
        position < first.count ? first[position] : second[position - first.count]
    }
}

@_cdecl("FuzzSniff_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
