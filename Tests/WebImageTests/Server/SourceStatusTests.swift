import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// What `webimage serve` answers when the source fails, as imgproxy 4 does: the source's 4xx passed
/// through, its 5xx as 502; and a URL that failed for good (now on the manager's blocklist) answered
/// with the status of its first failure, every time, not a generic 404.
@Suite struct SourceStatusTests {
    @Test(arguments: [(403, 403), (404, 404), (410, 410), (451, 451), (500, 502), (503, 502)])
    func aSourcesStatusIsPassedThroughOrIs502(source: Int, expected: Int) async throws {
        let fixture = try await ServerFixture()
        fixture.sources.route("/x.jpg", .text("no", status: source))
        let path = "/insecure/rs:fit:50:50/plain/\(fixture.source("/x.jpg"))"
        let first = try await fixture.get(path)
        #expect(first.status == expected, "the source answered \(source)")
        #expect(first.header("Cache-Control")?.contains("no-cache") ?? true, "an error is not cached")
        // A second request: a 4xx put the URL on the blocklist (a 5xx did not); either way the same status.
        let second = try await fixture.get(path)
        #expect(second.status == expected, "asked again after a source's \(source)")
        await fixture.stop()
    }

    /// A body that is not an image: 422 (imgproxy's "Source image type not supported"), then 422 again
    /// from the blocklist, and the source is not asked twice; neither answer may be cached.
    @Test func aRememberedFailureKeepsItsFirstStatus() async throws {
        let fixture = try await ServerFixture()
        fixture.sources.route("/text.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: Data("not an image".utf8)))
        let path = "/insecure/rs:fit:50:50/plain/\(fixture.source("/text.jpg"))"
        let first = try await fixture.get(path)
        #expect(first.status == 422 && first.header("Cache-Control") == "no-cache")
        let again = try await fixture.get(path)
        #expect(again.status == 422 && again.header("Cache-Control") == "no-cache")
        #expect(String(decoding: again.body, as: UTF8.self).contains("remembered"))
        #expect(fixture.sources.requestCount(for: "/text.jpg") == 1, "the blocked URL was fetched again")
        #expect(fixture.managerFixture.manager.failure(forFailedURL: fixture.sources.url("/text.jpg")) != nil)
        await fixture.stop()
    }
}
