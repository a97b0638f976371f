import Foundation
import Synchronization
import WebImage

/// The server's counters and latency histograms, rendered in the Prometheus text format (version
/// 0.0.4) at `/metrics`. It observes the manager (``WebImageObserver``) for the stages of each load
/// while the server runs (added beside the manager's own observers, which it leaves alone).
///
/// Every count is an atomic, with no lock: a memory hit is counted on libmicrohttpd's thread, and a
/// lock it shared with the cold threads could be held by one of them, preempted, for a scheduler
/// tick (`perf` saw such waits in `recordCachedResult`). A rendering reads each counter once; it is
/// not a snapshot of one instant, which Prometheus counters never are.
final class ServerMetrics: WebImageObserver {
    /// Upper bounds of the latency buckets, in seconds.
    static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    static let stages = ["download", "decode", "transform", "encode", "request"]
    /// The `tier` label of a result, by where its bytes came from; rendered in this order.
    private enum Tier: Int, CaseIterable {
        case disk, memory, network, shared

        init(_ source: ImageCacheSource?) {
            switch source {
            case .memory: self = .memory
            case .disk: self = .disk
            case .sharedTier: self = .shared
            case nil: self = .network
            }
        }
    }

    private let histograms = Dictionary(uniqueKeysWithValues: ServerMetrics.stages.map { ($0, LatencyHistogram(bounds: ServerMetrics.buckets)) })
    /// Requests answered, by status code (100–599; any other is counted as 599).
    private let statuses = AtomicCounters(count: 600)
    private let results = AtomicCounters(count: Tier.allCases.count)
    private let bytesIn = Atomic<Int>(0)
    private let bytesOut = Atomic<Int>(0)
    /// Requests being processed, and waiting for a slot (read at render time).
    let inFlight = Atomic<Int>(0)
    let queued = Atomic<Int>(0)
    /// imgproxy's families (``ImgproxyMetrics``): its processing route's requests, statuses, errors,
    /// latency and spans.
    let imgproxy = ImgproxyMetrics()

    func observe(_ event: WebImageEvent) {
        switch event {
        case .loadFinished(let report) where report.error == nil && !report.joinedLoadUnderWay:
            if report.durations.download > .zero {
                record(report.durations.download, in: "download")
                imgproxy.downloading.record(report.durations.download)
            }
            if report.durations.decode > .zero { record(report.durations.decode, in: "decode") }
            if report.durations.transform > .zero { record(report.durations.transform, in: "transform") }
            if report.source == .network { bytesIn.add(report.byteCount, ordering: .relaxed) }
        case .variantFinished(let report) where report.error == nil:
            results.add(1, at: Tier(report.cacheSource).rawValue)
            if let encode = report.encodeDuration, !report.joinedEncodeUnderWay { record(encode, in: "encode") }
        default:
            break
        }
    }

    /// Counts a result answered from a cache tier before any processing slot was taken (the manager
    /// reports no load for it).
    func recordCachedResult(_ variant: ImageVariant) {
        results.add(1, at: Tier(variant.cacheSource).rawValue)
    }

    /// Counts one answered request.
    func recordRequest(status: Int, bytesOut: Int, duration: Duration) {
        statuses.add(1, at: (100...599).contains(status) ? status : 599)
        self.bytesOut.add(bytesOut, ordering: .relaxed)
        record(duration, in: "request")
    }

    private func record(_ duration: Duration, in stage: String) {
        histograms[stage]?.record(duration)
    }

    /// The Prometheus text exposition: WebImage's families, imgproxy's (named under `namespace`,
    /// for `workers` processing slots) and, with `shared`, each shared tier's counters and breaker state.
    func render(shared: [SharedTierReport] = [], imgproxyNamespace namespace: String = "", workers: Int = 0) -> String {
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String) {
            lines += ["# HELP \(name) \(help)", "# TYPE \(name) \(type)"]
        }
        family("webimage_http_requests_total", "counter", "HTTP requests answered, by status code.")
        for status in 100..<600 {
            let count = statuses.value(at: status)
            if count > 0 { lines.append("webimage_http_requests_total{code=\"\(status)\"} \(count)") }
        }
        family("webimage_results_total", "counter", "Images served, by the tier their bytes came from.")
        for tier in Tier.allCases {
            lines.append("webimage_results_total{tier=\"\(tier)\"} \(results.value(at: tier.rawValue))")
        }
        family("webimage_source_bytes_total", "counter", "Bytes downloaded from sources.")
        lines.append("webimage_source_bytes_total \(bytesIn.load(ordering: .relaxed))")
        family("webimage_response_bytes_total", "counter", "Response body bytes sent.")
        lines.append("webimage_response_bytes_total \(bytesOut.load(ordering: .relaxed))")
        family("webimage_requests_in_flight", "gauge", "Requests being processed.")
        lines.append("webimage_requests_in_flight \(inFlight.load(ordering: .relaxed))")
        family("webimage_requests_queued", "gauge", "Requests waiting for a processing slot.")
        lines.append("webimage_requests_queued \(queued.load(ordering: .relaxed))")
        for stage in Self.stages {
            let name = "webimage_\(stage)_duration_seconds"
            family(name, "histogram", stage == "request" ? "Whole requests, from dispatch to answer." : "Time spent in the \(stage) stage.")
            lines += histograms[stage]?.lines(name: name) ?? []
        }
        if !shared.isEmpty { lines += Self.lines(for: shared) }
        lines += imgproxy.lines(namespace: namespace, workers: workers, imagesInProgress: inFlight.load(ordering: .relaxed),
                                queued: queued.load(ordering: .relaxed))
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
