import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import WebImage
@testable import WebImageServer

/// imgproxy's Prometheus families on their own listener (`IMGPROXY_PROMETHEUS_BIND`,
/// `IMGPROXY_PROMETHEUS_NAMESPACE`), as a scraper reads them over HTTP.
@Suite struct ImgproxyMetricsTests {
    @Test func imgproxysFamiliesAreServedOnTheirOwnListener() async throws {
        let fixture = try await ServerFixture { config in
            config.prometheusListener = ("127.0.0.1", 0)
            config.prometheusNamespace = "imgproxy"
            config.maxInFlight = 4
        }
        fixture.sources.route("/photo.jpg", TestResponse(headers: [("Content-Type", "image/jpeg")], body: try encodedPicture(as: .jpeg)))
        #expect(try await fixture.get("/insecure/w:10/plain/\(fixture.source("/photo.jpg"))").status == 200)
        #expect(try await fixture.get("/insecure/w:10/plain/\(fixture.source("/missing.jpg"))").status == 404)
        #expect(try await fixture.get("/insecure/nope:1/plain/\(fixture.source("/photo.jpg"))").status == 400)
        #expect(try await fixture.get("/w:10/plain/\(fixture.source("/photo.jpg"))").status == 403)
        #expect(try await fixture.get("/health").status == 200, "not a processing route: not counted")
        let port = try #require(fixture.server.prometheusPort)
        #expect(port != fixture.port)
        let (body, response) = try await fixture.session.data(from: URL(string: "http://127.0.0.1:\(port)/metrics")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let text = String(decoding: body, as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for expected in ["imgproxy_requests_total 4", "imgproxy_status_codes_total{status=\"200\"} 1", "imgproxy_status_codes_total{status=\"404\"} 1",
                         "imgproxy_errors_total{type=\"path_parsing\"} 1", "imgproxy_errors_total{type=\"security\"} 1",
                         "imgproxy_errors_total{type=\"download\"} 1", "imgproxy_request_duration_seconds_count 4", "imgproxy_workers 4",
                         "imgproxy_images_in_progress 0", "imgproxy_requests_in_progress 0", "imgproxy_workers_utilization 0.0",
                         "# TYPE imgproxy_request_span_duration_seconds histogram",
                         "imgproxy_request_span_duration_seconds_count{span=\"queue\"} 2",
                         "imgproxy_request_span_duration_seconds_count{span=\"downloading_image\"} 1"] {
            #expect(lines.contains(expected), "\(expected) in:\n\(text)")
        }
        #expect(text.contains("imgproxy_request_duration_seconds_bucket{le=\"0.005\"}"), "Go's default buckets")
        #expect(text.contains("webimage_http_requests_total{code=\"200\"}"), "WebImage's own families beside imgproxy's")
        let (_, other) = try await fixture.session.data(from: URL(string: "http://127.0.0.1:\(port)/health")!)
        #expect((other as? HTTPURLResponse)?.statusCode == 404, "the listener serves /metrics only")
        await fixture.stop()
        #expect(fixture.server.prometheusPort == nil, "stopped with the server")
    }
}
