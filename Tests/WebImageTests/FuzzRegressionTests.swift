import Foundation
import Testing
@testable import WebImage

/// Inputs the fuzzers in `Fuzz/` found breaking library code, minimized. Each test feeds its input
/// to the API the fuzzer called and expects what the fuzzer checked: no crash, and a result that
/// keeps the API's contract.
@Suite struct FuzzRegressionTests {
    /// fuzz-filename, minimized input `2f 2f f7`: `"//"` and a byte that is not UTF-8 (U+FFFD after
    /// the fuzzer's lenient decoding). `URL(string:)` refuses the key, and before cb9d66b
    /// `pathExtension(ofKey:)` then called `NSString.pathExtension`, which traps in
    /// swift-corelibs-foundation (`NSString._stringByFixingSlashes`: index out of bounds, or
    /// "Substring index is out of bounds"). Passes since cb9d66b (`plainPathExtension`).
    @Test(arguments: [
        String(decoding: [0x2F, 0x2F, 0xF7] as [UInt8], as: UTF8.self), // the minimized input: "//\u{FFFD}"
        "http://[//é",                                                     // a malformed URL of the same shape
    ])
    func fileNameOfANonURLKeyWithDoubleSlashAndNonASCIIDoesNotCrash(key: String) {
        let name = DiskCacheFileName.make(forKey: key)
        #expect(name.hasPrefix(MD5.hex(Array(key.utf8))))
        #expect(DiskCacheFileName.make(forKey: key) == name)
    }

    /// fuzz-filename, minimized input `00 2e 3a 2f d6 ae`: NUL, `.`, `:`, `/`, U+05AE (a combining
    /// mark). `URL(string:)` refuses the key; `plainPathExtension` splits on the *Character* `/`,
    /// but `/` followed by a combining mark (or a ZWJ) is one Character, so the extension is
    /// `:/\u{5AE}`, and the filter that strips `:`, `\0` and `/` compares Characters too: the name
    /// becomes `<md5>./\u{5AE}`. A file name with a `/` puts the entry in a directory that does not
    /// exist, so the key could never be stored. The extension is now parsed and cleaned as UTF-8 bytes.
    @Test(arguments: [
        String(decoding: [0x00, 0x2E, 0x3A, 0x2F, 0xD6, 0xAE] as [UInt8], as: UTF8.self), // minimized
        "http://[/a./\u{301}",                                                              // readable
    ])
    func fileNameNeverContainsASlashOrNUL(key: String) {
        let name = DiskCacheFileName.make(forKey: key)
        let bytes = Array(name.utf8)
        #expect(!bytes.contains(UInt8(ascii: "/")), "file name \(name.debugDescription)")
        #expect(!bytes.contains(0), "file name \(name.debugDescription)")
        #expect(bytes.count <= 255)
        #expect(name.hasPrefix(MD5.hex(Array(key.utf8))))
    }
}
