import Foundation
import Synchronization
import WebImage

/// The server's counters and latency histograms, rendered in the Prometheus text format (version
/// 0.0.4) at `/metrics`. It observes the manager (``WebImageObserver``) for the stages of each load
/// while the server runs (added beside the manager's own observers, which it leaves alone).
final class ServerMetrics: WebImageObserver {
    /// Upper bounds of the latency buckets, in seconds.
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    static let stages = ["download", "decode", "transform", "encode", "request"]

    private struct Histogram {
        var counts = [Int](repeating: 0, count: ServerMetrics.buckets.count)
        var sum = 0.0
        var count = 0

        mutating func record(_ duration: Duration) {
            let seconds = duration.secondsValue
            for (index, bound) in ServerMetrics.buckets.enumerated() where seconds <= bound { counts[index] += 1 }
            sum += seconds
            count += 1
        }
    }

    private struct State {
        var requestsByStatus: [Int: Int] = [:]
        var resultsByTier: [String: Int] = ["memory": 0, "disk": 0, "shared": 0, "network": 0]
        var bytesIn = 0
        var bytesOut = 0
        var histograms: [String: Histogram] = Dictionary(uniqueKeysWithValues: ServerMetrics.stages.map { ($0, Histogram()) })
    }

    private let state = Mutex(State())
    /// Requests being processed, and waiting for a slot (read at render time).
    let inFlight = Atomic<Int>(0)
    let queued = Atomic<Int>(0)

    func observe(_ event: WebImageEvent) {
        switch event {
        case .loadFinished(let report) where report.error == nil && !report.joinedLoadUnderWay:
            state.withLock { state in
                if report.durations.download > .zero { state.histograms["download"]?.record(report.durations.download) }
                if report.durations.decode > .zero { state.histograms["decode"]?.record(report.durations.decode) }
                if report.durations.transform > .zero { state.histograms["transform"]?.record(report.durations.transform) }
                if report.source == .network { state.bytesIn += report.byteCount }
            }
        case .variantFinished(let report) where report.error == nil:
            state.withLock { state in
                let tier = Self.tier(of: report.cacheType, fromSharedTier: report.isFromSharedTier)
                state.resultsByTier[tier, default: 0] += 1
                if let encode = report.encodeDuration, !report.joinedEncodeUnderWay { state.histograms["encode"]?.record(encode) }
            }
        default:
            break
        }
    }

    /// Counts a result answered from a cache tier before any processing slot was taken (the manager
    /// reports no load for it).
    func recordCachedResult(_ variant: ImageVariant) {
        let tier = Self.tier(of: variant.cacheType, fromSharedTier: variant.isFromSharedTier)
        state.withLock { $0.resultsByTier[tier, default: 0] += 1 }
    }

    /// The `tier` label of a result: `memory`, `disk` (this process's), `shared` (Redis), `network`.
    private static func tier(of cacheType: ImageCacheType, fromSharedTier: Bool) -> String {
        switch cacheType {
        case .memory: "memory"
        case .disk, .all: fromSharedTier ? "shared" : "disk"
        case .none: "network"
        }
    }

    /// Counts one answered request.
    func recordRequest(status: Int, bytesOut: Int, duration: Duration) {
        state.withLock { state in
            state.requestsByStatus[status, default: 0] += 1
            state.bytesOut += bytesOut
            state.histograms["request"]?.record(duration)
        }
    }

    /// The Prometheus text exposition; with `shared`, each shared tier's counters and breaker state.
    func render(shared: [SharedTierReport] = []) -> String {
        let state = self.state.withLock { $0 }
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(type)"]
        }
        family("webimage_http_requests_total", "counter", "HTTP requests answered, by status code.")
        for (status, count) in state.requestsByStatus.sorted(by: { $0.key < $1.key }) {
            lines.append("webimage_http_requests_total{code=\"\(status)\"} \(count)")
        }
        family("webimage_results_total", "counter", "Images served, by the tier their bytes came from.")
        for (tier, count) in state.resultsByTier.sorted(by: { $0.key < $1.key }) {
            lines.append("webimage_results_total{tier=\"\(tier)\"} \(count)")
        }
        family("webimage_source_bytes_total", "counter", "Bytes downloaded from sources.")
        lines.append("webimage_source_bytes_total \(state.bytesIn)")
        family("webimage_response_bytes_total", "counter", "Response body bytes sent.")
        lines.append("webimage_response_bytes_total \(state.bytesOut)")
        family("webimage_requests_in_flight", "gauge", "Requests being processed.")
        lines.append("webimage_requests_in_flight \(inFlight.load(ordering: .relaxed))")
        family("webimage_requests_queued", "gauge", "Requests waiting for a processing slot.")
        lines.append("webimage_requests_queued \(queued.load(ordering: .relaxed))")
        for stage in Self.stages {
            let name = "webimage_\(stage)_duration_seconds"
            family(name, "histogram", stage == "request" ? "Whole requests, from dispatch to answer." : "Time spent in the \(stage) stage.")
            let histogram = state.histograms[stage] ?? Histogram()
            for (index, bound) in Self.buckets.enumerated() {
                lines.append("\(name)_bucket{le=\"\(bound)\"} \(histogram.counts[index])")
            }
            lines.append("\(name)_bucket{le=\"+Inf\"} \(histogram.count)")
            lines.append("\(name)_sum \(histogram.sum)")
            lines.append("\(name)_count \(histogram.count)")
        }
        if !shared.isEmpty { lines += Self.lines(for: shared) }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The shared tiers' families: each family once, a sample per tier labelled `tier="<name>"`.
    private static func lines(for tiers: [SharedTierReport]) -> [String] {
        let families: [(String, String, String, (SharedTierReport) -> Int)] = [
            ("webimage_shared_tier_hits_total", "counter", "Reads of the shared tier that found an entry.", \.hits),
            ("webimage_shared_tier_misses_total", "counter", "Reads of the shared tier that found nothing.", \.misses),
            ("webimage_shared_tier_errors_total", "counter", "Shared-tier commands that failed or were skipped (a miss, never a failed load).", \.errors),
            ("webimage_shared_tier_nodes", "gauge", "Nodes of the shared tier.", \.nodes),
            ("webimage_shared_tier_open_breakers", "gauge", "Nodes skipped now because their circuit breaker is open.", \.openBreakers),
            ("webimage_shared_tier_breaker_openings_total", "counter", "Times a node's circuit breaker opened.", \.breakerOpenings),
            ("webimage_shared_tier_fills_claimed_total", "counter", "Origin fetches this process claimed for the fleet.", \.fillsClaimed),
            ("webimage_shared_tier_fills_joined_total", "counter", "Loads that read another process's fill instead of the origin.", \.fillsJoined),
            ("webimage_shared_tier_fill_waits_timed_out_total", "counter", "Waits for another process's fill that timed out.", \.fillWaitsTimedOut),
        ]
        return families.flatMap { name, type, help, value in
            ["# HELP \(name) \(help)", "# TYPE \(name) \(type)"] + tiers.map { "\(name){tier=\"\($0.name)\"} \(value($0))" }
        }
    }
}
