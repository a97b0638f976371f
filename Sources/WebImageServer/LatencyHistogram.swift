import WebImage

/// One latency histogram of the Prometheus text format: a count per bucket, the count above the last
/// bound, the count of all and the sum, each an atomic (``AtomicCounters``), recorded from any
/// thread without a lock.
final class LatencyHistogram: Sendable {
    /// Upper bounds of the buckets, in seconds, ascending.
    let bounds: [Double]
    private let counters: AtomicCounters

    /// Prometheus' Go client's `DefBuckets`, which imgproxy's histograms use.
    static let goDefaultBounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Slots in ``counters``: one per bucket (not cumulative: rendering sums them), then the count
    /// above the last bound, the count of all and the sum in nanoseconds.
    private var overflow: Int { bounds.count }
    private var total: Int { bounds.count + 1 }
    private var sumNanoseconds: Int { bounds.count + 2 }

    init(bounds: [Double]) {
        self.bounds = bounds
        counters = AtomicCounters(count: bounds.count + 3)
    }

    func record(_ duration: Duration) {
        let seconds = duration.secondsValue
        counters.add(1, at: bounds.firstIndex { seconds <= $0 } ?? overflow)
        counters.add(1, at: total)
        // Clamped: a negative or absurd duration must not trap (Int's overflow) or wrap the sum.
        counters.add(seconds.isFinite ? Int(min(max(seconds * 1e9, 0), 1e15)) : 0, at: sumNanoseconds)
    }

    /// The `_bucket`, `_sum` and `_count` lines of `name`, each with `labels` (`span="queue"`, or
    /// empty) before `le`. The buckets are read first and the total last, so that +Inf (the total) is
    /// never below a bucket.
    func lines(name: String, labels: String = "") -> [String] {
        let prefix = labels.isEmpty ? "" : labels + ","
        var lines: [String] = [], cumulative = 0
        for (index, bound) in bounds.enumerated() {
            cumulative += counters.value(at: index)
            lines.append("\(name)_bucket{\(prefix)le=\"\(bound)\"} \(cumulative)")
        }
        let count = max(counters.value(at: total), cumulative + counters.value(at: overflow))
        let suffix = labels.isEmpty ? "" : "{\(labels)}"
        lines.append("\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)")
        lines.append("\(name)_sum\(suffix) \(Double(counters.value(at: sumNanoseconds)) / 1e9)")
        lines.append("\(name)_count\(suffix) \(count)")
        return lines
    }
}
