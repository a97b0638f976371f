import Foundation
import FuzzSupport
@testable import WebImage

// fuzz-filename: the disk cache's file names for arbitrary keys (the input decoded leniently as
// UTF-8). A name must be usable as one file name in the cache directory: non-empty, no "/", no NUL,
// at most 255 bytes (NAME_MAX), the same every time; it is the key's MD5 (32 lower-case hex digits),
// optionally followed by "." and the extension.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let key = String(decoding: UnsafeBufferPointer(start: bytes, count: bytes == nil ? 0 : count), as: UTF8.self)
    let name = DiskCacheFileName.make(forKey: key)
    let utf8 = Array(name.utf8)
    precondition(!utf8.isEmpty, "empty file name")
    precondition(!utf8.contains(UInt8(ascii: "/")), "file name \(name.debugDescription) contains '/'")
    precondition(!utf8.contains(0), "file name \(name.debugDescription) contains NUL")
    precondition(utf8.count <= 255, "file name is \(utf8.count) bytes")
    precondition(name != "." && name != "..")
    precondition(DiskCacheFileName.make(forKey: key) == name, "make(forKey:) is not deterministic")

    let hexDigits = Set("0123456789abcdef".utf8)
    precondition(utf8.count >= 32 && utf8.prefix(32).allSatisfy(hexDigits.contains), "name does not start with an MD5")
    precondition(utf8.count == 32 || (utf8.count > 33 && utf8[32] == UInt8(ascii: ".")), "no '.' before the extension")

    let pathExtension = DiskCacheFileName.pathExtension(ofKey: key)
    precondition(DiskCacheFileName.pathExtension(ofKey: key) == pathExtension, "pathExtension is not deterministic")
    precondition(pathExtension.utf8.count <= DiskCacheFileName.maxExtensionLength, "extension too long")
    precondition(!pathExtension.utf8.contains(0) && !pathExtension.utf8.contains(UInt8(ascii: "/")),
                 "extension \(pathExtension.debugDescription) contains NUL or '/'")

    let bare = DiskCacheFileName.withoutExtension(name)
    if utf8.count == 32 {
        precondition(bare == nil, "withoutExtension of a bare MD5 is \(bare.debugDescription)")
    } else {
        precondition(bare.map { Array($0.utf8) } == Array(utf8.prefix(32)),
                     "withoutExtension(\(name.debugDescription)) is \(bare.debugDescription)")
    }
    return 0
}

@_cdecl("FuzzFileName_main")
public func entry(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    runFuzzer(argc: argc, argv: argv, callback: fuzz)
}
