import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage

/// The resuming rules, driven directly (no network).
@Suite struct DownloadResumptionTests {
    let url = URL(string: "http://example.com/a.png")!
    let kept = PartialDownload(data: Data([1, 2, 3, 4]), validator: .entityTag("\"v1\""),
                               headers: ["etag": "\"v1\"", "accept-ranges": "bytes", "content-type": "image/png"])

    func continuation(_ range: String, etag: String = "\"v1\"", length: String? = nil) -> [String: String] {
        var headers = ["content-range": range, "etag": etag]
        headers["content-length"] = length
        return headers
    }

    @Test func a206ThatStartsWhereThePartialEndsContinuesIt() {
        var resumption = DownloadResumption(continuing: kept)
        let verdict = resumption.evaluate(statusCode: 206, headers: continuation("bytes 4-9/10", length: "6"))
        guard case .continues(let prefix, let total, let headers) = verdict else {
            Issue.record("expected a continuation, got \(verdict)")
            return
        }
        #expect(prefix == kept.data && total == 10)
        #expect(headers["content-type"] == "image/png")   // the first response's, where the 206 says nothing
        #expect(headers["content-length"] == "10" && headers["content-range"] == nil)
        #expect(resumption.resumedBytes == 4)
        #expect(resumption.pending == nil)
        #expect(resumption.validator == .entityTag("\"v1\""))
    }

    @Test(arguments: [
        "bytes 3-9/10",   // starts before the end of the partial: would repeat a byte
        "bytes 5-9/10",   // starts after it: would skip one
        "bytes 4-8/10",   // stops before the end of the body
        "bytes 4-9",      // malformed
        "bytes=4-9/10",   // malformed
        "bytes 4-3/10",   // empty
        "bytes -4-9/10",  // signed
        "items 4-9/10",   // not bytes
    ])
    func a206ThatDoesNotContinueThePartialExactlyRestarts(range: String) {
        var resumption = DownloadResumption(continuing: kept)
        #expect(resumption.evaluate(statusCode: 206, headers: continuation(range)) == .restart)
        #expect(resumption.pending == nil)
        #expect(resumption.leftover(body: Data(), error: .cancelled(url: url)) == nil)
    }

    @Test func a206WithAnotherValidatorALengthThatDisagreesOrAContentCodingRestarts() {
        var changed = DownloadResumption(continuing: kept)
        #expect(changed.evaluate(statusCode: 206, headers: continuation("bytes 4-9/10", etag: "\"v2\"")) == .restart)
        var lying = DownloadResumption(continuing: kept)
        #expect(lying.evaluate(statusCode: 206, headers: continuation("bytes 4-9/10", length: "7")) == .restart)
        var coded = DownloadResumption(continuing: kept)
        var headers = continuation("bytes 4-9/10")
        headers["content-encoding"] = "gzip"
        #expect(coded.evaluate(statusCode: 206, headers: headers) == .restart)
    }

    @Test func anUnknownTotalIsAcceptedAndTheRangeEndGivesTheSize() {
        var resumption = DownloadResumption(continuing: kept)
        guard case .continues(_, let total, _) = resumption.evaluate(statusCode: 206, headers: continuation("bytes 4-20/*")) else {
            Issue.record("expected a continuation")
            return
        }
        #expect(total == 21)
    }

    @Test func a416Restarts() {
        var resumption = DownloadResumption(continuing: kept)
        #expect(resumption.evaluate(statusCode: 416, headers: ["content-range": "bytes */4"]) == .restart)
    }

    @Test func a200DropsThePartialAndStartsFromByteZero() {
        var resumption = DownloadResumption(continuing: kept)
        #expect(resumption.evaluate(statusCode: 200, headers: ["etag": "\"v2\"", "accept-ranges": "bytes"]) == .fromStart)
        #expect(resumption.pending == nil && resumption.resumedBytes == 0)
        #expect(resumption.validator == .entityTag("\"v2\""))   // the new body can be kept in turn
        #expect(resumption.leftover(body: Data([9, 9]), error: .truncatedResponse(received: 2, expected: 8, url: url))?.data == Data([9, 9]))
    }

    @Test func aFailureStatusOrNoResponseLeavesThePartialToBeKeptAgain() {
        var failed = DownloadResumption(continuing: kept)
        #expect(failed.evaluate(statusCode: 503, headers: [:]) == .fromStart)
        #expect(failed.leftover(body: Data(), error: .badStatusCode(503, url: url)) == kept)
        let unanswered = DownloadResumption(continuing: kept)
        #expect(unanswered.leftover(body: Data(), error: .transport(URLError(.cannotConnectToHost), url: url)) == kept)
    }

    @Test func onlyFailuresALaterAttemptMayGetPastKeepTheBody() {
        var resumption = DownloadResumption(continuing: nil)
        _ = resumption.evaluate(statusCode: 200, headers: ["etag": "\"v1\"", "accept-ranges": "bytes"])
        let body = Data([1, 2, 3])
        for error: WebImageError in [.truncatedResponse(received: 3, expected: 9, url: url), .timedOut(url: url),
                                     .cancelled(url: url), .transport(URLError(.networkConnectionLost), url: url)] {
            #expect(resumption.leftover(body: body, error: error)?.data == body, "\(error)")
        }
        for error: WebImageError in [.responseTooLarge(limit: 2, url: url), .rejected(url: url, reason: "no")] {
            #expect(resumption.leftover(body: body, error: error) == nil, "\(error)")
        }
        #expect(resumption.leftover(body: Data(), error: .timedOut(url: url)) == nil)
    }

    @Test func aResponseThatCannotBeResumedLeavesNothing() {
        var resumption = DownloadResumption(continuing: nil)
        _ = resumption.evaluate(statusCode: 200, headers: ["etag": "W/\"v1\"", "accept-ranges": "bytes"])
        #expect(resumption.leftover(body: Data([1]), error: .timedOut(url: url)) == nil)
        let ineligible = DownloadResumption()
        #expect(ineligible.leftover(body: Data([1]), error: .timedOut(url: url)) == nil)
    }

    @Test func onlyAPlainGetWithoutItsOwnRangeOrValidatorsTakesPart() {
        #expect(DownloadResumption.mayTakePart(URLRequest(url: url)))
        for field in ["Range", "If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"] {
            var request = URLRequest(url: url)
            request.setValue("x", forHTTPHeaderField: field)
            #expect(!DownloadResumption.mayTakePart(request), "\(field)")
        }
        var post = URLRequest(url: url)
        post.httpMethod = "POST"
        #expect(!DownloadResumption.mayTakePart(post))
    }

    @Test func askingForTheRestAddsRangeAndIfRangeAndRestartingRemovesThem() {
        var request = URLRequest(url: url)
        DownloadResumption.askForRest(of: kept, in: &request)
        #expect(request.value(forHTTPHeaderField: "Range") == "bytes=4-")
        #expect(request.value(forHTTPHeaderField: "If-Range") == "\"v1\"")
        let plain = DownloadResumption.withoutRange(request)
        #expect(plain.value(forHTTPHeaderField: "Range") == nil && plain.value(forHTTPHeaderField: "If-Range") == nil)
    }
}
