import Foundation
import Testing
@testable import WebImage

@Suite struct PartialDownloadTests {
    typealias Validator = PartialDownload.Validator
    let date = "Tue, 01 Apr 2025 10:00:00 GMT"

    @Test func aStrongETagWithByteRangesIsTheValidator() {
        let headers = ["etag": "\"abc\"", "accept-ranges": "bytes", "last-modified": date]
        #expect(Validator(resumableResponseWith: 200, headers: headers) == .entityTag("\"abc\""))
        #expect(Validator(resumableResponseWith: 200, headers: headers)?.headerValue == "\"abc\"")
    }

    @Test func withoutAStrongETagLastModifiedIsTheValidator() {
        #expect(Validator(resumableResponseWith: 200, headers: ["last-modified": date, "accept-ranges": "bytes"]) == .lastModified(date))
        #expect(Validator(resumableResponseWith: 200, headers: ["etag": "W/\"abc\"", "last-modified": date, "accept-ranges": "bytes"])
            == .lastModified(date))
    }

    @Test func weakETagsNeverQualify() {
        #expect(Validator(resumableResponseWith: 200, headers: ["etag": "W/\"abc\"", "accept-ranges": "bytes"]) == nil)
        #expect(!Validator.isStrongEntityTag("W/\"abc\""))
        #expect(!Validator.isStrongEntityTag("abc"))
        #expect(Validator.isStrongEntityTag("\"\""))
    }

    @Test func withoutByteRangesOrWithAContentCodingNothingQualifies() {
        #expect(Validator(resumableResponseWith: 200, headers: ["etag": "\"abc\""]) == nil)
        #expect(Validator(resumableResponseWith: 200, headers: ["etag": "\"abc\"", "accept-ranges": "none"]) == nil)
        #expect(Validator(resumableResponseWith: 200, headers: ["etag": "\"abc\"", "accept-ranges": "bytes", "content-encoding": "gzip"]) == nil)
        #expect(Validator(resumableResponseWith: 200, headers: ["etag": "\"abc\"", "accept-ranges": "Bytes", "content-encoding": "identity"])
            == .entityTag("\"abc\""))
        #expect(Validator(resumableResponseWith: 200, headers: ["accept-ranges": "bytes"]) == nil)
    }

    @Test func onlyA200StartsABodyThatCanBeResumed() {
        let headers = ["etag": "\"abc\"", "accept-ranges": "bytes"]
        #expect(Validator(resumableResponseWith: 203, headers: headers) == nil)
        #expect(Validator(resumableResponseWith: 206, headers: headers) == nil)
    }

    @Test func aValidatorMatchesOnlyTheSameValue() {
        #expect(Validator.entityTag("\"abc\"").matches(["etag": "\"abc\""]))
        #expect(!Validator.entityTag("\"abc\"").matches(["etag": "\"abd\""]))
        #expect(!Validator.entityTag("\"abc\"").matches([:]))
        #expect(Validator.lastModified(date).matches(["last-modified": date]))
        #expect(!Validator.lastModified(date).matches(["last-modified": "Wed, 02 Apr 2025 10:00:00 GMT"]))
    }
}
