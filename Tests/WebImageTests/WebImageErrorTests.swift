import Foundation
import Testing
@testable import WebImage

@Suite struct WebImageErrorTests {
    let url = URL(string: "https://example.com/a.png")!

    @Test func imageDataThatEndsEarlyIsTransientAndDoesNotBlock() {
        let truncated = WebImageError.decodingFailed(.truncatedData(format: .png), url: url)
        #expect(truncated.isTransient)
        #expect(!truncated.blocksURL)
        let corrupt = WebImageError.decodingFailed(.corruptData(format: .png, reason: "bad CRC"), url: url)
        #expect(!corrupt.isTransient)
        #expect(corrupt.blocksURL)
    }

    @Test func statusCodesSplitIntoTransientAndBlocking() {
        for code in [500, 503, 408, 429] {
            let error = WebImageError.badStatusCode(code, url: url)
            #expect(error.isTransient && !error.blocksURL, "HTTP \(code)")
        }
        for code in [400, 403, 404, 410] {
            let error = WebImageError.badStatusCode(code, url: url)
            #expect(!error.isTransient && error.blocksURL, "HTTP \(code)")
        }
    }

    @Test func transportErrorsNameWhatHappened() {
        #expect(WebImageError.explanation(of: .cannotConnectToHost) == "the connection was refused")
        #expect(WebImageError.explanation(of: .unknown).contains("header data"))
        #expect(WebImageError.explanation(of: .dataLengthExceedsMaximum).contains("\(URLError.Code.dataLengthExceedsMaximum.rawValue)"))
    }
}
