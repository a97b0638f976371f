import Foundation
import Testing
@testable import WebImage
@testable import WebImageServer

/// The server's metrics count without a lock: many threads at once lose nothing, histograms render
/// cumulative buckets ending at their count, and the tiers and statuses land under their labels.
@Suite struct ServerMetricsTests {
    /// The value of each sample line of a rendering, by its name and labels.
    private static func samples(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    @Test func concurrentRecordsAreAllCounted() async {
        let metrics = ServerMetrics()
        let threads = 8, each = 5_000
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<threads {
                group.addTask {
                    for index in 0..<each {
                        // 0.5 ms, 3 ms, 20 ms and 20 s: the first bucket, two middle ones, and past the last bound.
                        let duration: Duration = [.microseconds(500), .milliseconds(3), .milliseconds(20), .seconds(20)][(thread + index) % 4]
                        metrics.recordRequest(status: index % 2 == 0 ? 200 : 404, bytesOut: 10, duration: duration)
                        metrics.recordCachedResult(ImageVariant(data: Data([1]), format: .png, pixelSize: PixelSize(width: 1, height: 1),
                                                                cacheType: index % 2 == 0 ? .memory : .disk, entityTag: "\"t\""))
                    }
                }
            }
        }
        let values = Self.samples(metrics.render())
        let total = Double(threads * each)
        #expect(values["webimage_http_requests_total{code=\"200\"}"] == total / 2)
        #expect(values["webimage_http_requests_total{code=\"404\"}"] == total / 2)
        #expect(values["webimage_response_bytes_total"] == total * 10)
        #expect(values["webimage_results_total{tier=\"memory\"}"] == total / 2)
        #expect(values["webimage_results_total{tier=\"disk\"}"] == total / 2)
        #expect(values["webimage_results_total{tier=\"network\"}"] == 0)
        #expect(values["webimage_request_duration_seconds_count"] == total)
        #expect(values["webimage_request_duration_seconds_bucket{le=\"+Inf\"}"] == total)
        #expect(values["webimage_request_duration_seconds_bucket{le=\"0.001\"}"] == total / 4)
        #expect(values["webimage_request_duration_seconds_bucket{le=\"0.005\"}"] == total / 2)
        #expect(values["webimage_request_duration_seconds_bucket{le=\"10.0\"}"] == total * 3 / 4, "20 s is past the last bound")
        let sum = values["webimage_request_duration_seconds_sum"] ?? 0
        #expect(abs(sum - total / 4 * (0.0005 + 0.003 + 0.020 + 20)) < 1e-6 * sum)
        var previous = 0.0
        for bound in ServerMetrics.buckets {
            let value = values["webimage_request_duration_seconds_bucket{le=\"\(bound)\"}"] ?? -1
            #expect(value >= previous, "buckets are cumulative")
            previous = value
        }
    }

    @Test func anOddStatusIsCountedAsTheLastOne() {
        let metrics = ServerMetrics()
        metrics.recordRequest(status: 1_000, bytesOut: 0, duration: .zero)
        metrics.recordRequest(status: -1, bytesOut: 0, duration: .zero)
        let values = Self.samples(metrics.render())
        #expect(values["webimage_http_requests_total{code=\"599\"}"] == 2)
        #expect(values["webimage_http_requests_total{code=\"100\"}"] == nil, "only codes seen are listed")
    }

    @Test func atomicCountersStartAtZeroAndAdd() {
        let counters = AtomicCounters(count: 3)
        #expect((0..<3).map(counters.value(at:)) == [0, 0, 0])
        counters.add(5, at: 2)
        counters.add(-2, at: 2)
        #expect(counters.value(at: 2) == 3 && counters.count == 3)
    }
}
