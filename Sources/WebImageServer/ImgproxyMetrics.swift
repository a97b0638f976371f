import Synchronization
import WebImage

/// imgproxy's Prometheus families (its `monitoring/prometheus`), with its names, labels and
/// buckets, so that a dashboard or alert built for imgproxy reads `webimage serve`:
/// `requests_total`, `status_codes_total{status}`, `errors_total{type}`,
/// `request_duration_seconds`, `request_span_duration_seconds{span}` (`queue`,
/// `downloading_image`, `processing_image`), `workers`, `requests_in_progress`,
/// `images_in_progress` and `workers_utilization`, each under the namespace
/// (`IMGPROXY_PROMETHEUS_NAMESPACE`: `<namespace>_requests_total`). They count the processing
/// routes (images and `/info`), as imgproxy counts its processing handler.
final class ImgproxyMetrics: Sendable {
    /// imgproxy's error types (`handlers/errors.go`, `server/errors.go`), by the status WebImage
    /// answered: the status says which stage refused.
    enum ErrorType: String, CaseIterable {
        case pathParsing = "path_parsing", security, queue, download, timeout, processing, unexpected

        init?(status: Int) {
            switch status {
            case 400, 405: self = .pathParsing
            case 403: self = .security
            case 429: self = .queue
            case 503, 504: self = .timeout   // 503: IMGPROXY_TIMEOUT (or a drain), 504: the source's
            case 422, 500: self = .processing
            case 400..<600: self = .download   // the source's 4xx passed through, 404 unreachable, 502
            default: return nil
            }
        }
    }

    private let requests = Atomic<Int>(0)
    private let statuses = AtomicCounters(count: 600)
    private let errors = AtomicCounters(count: ErrorType.allCases.count)
    private let duration = LatencyHistogram(bounds: LatencyHistogram.goDefaultBounds)
    /// The spans: waiting for a processing slot, downloading the source, holding the slot.
    let queue = LatencyHistogram(bounds: LatencyHistogram.goDefaultBounds)
    let downloading = LatencyHistogram(bounds: LatencyHistogram.goDefaultBounds)
    let processing = LatencyHistogram(bounds: LatencyHistogram.goDefaultBounds)

    /// Counts one answered request of a processing route.
    func recordRequest(status: Int, duration elapsed: Duration) {
        requests.add(1, ordering: .relaxed)
        statuses.add(1, at: (100...599).contains(status) ? status : 599)
        if let type = ErrorType(status: status) { errors.add(1, at: ErrorType.allCases.firstIndex(of: type)!) }
        duration.record(elapsed)
    }

    /// The families' lines under `namespace`, for `workers` processing slots of which
    /// `imagesInProgress` are taken and `queued` requests wait.
    func lines(namespace: String, workers: Int, imagesInProgress: Int, queued: Int) -> [String] {
        let prefix = namespace.isEmpty ? "" : namespace + "_"
        var lines: [String] = []
        func family(_ name: String, _ type: String, _ help: String, _ samples: [String]) {
            lines += ["# HELP \(prefix)\(name) \(help)", "# TYPE \(prefix)\(name) \(type)"] + samples.map { prefix + $0 }
        }
        family("requests_total", "counter", "A counter of the total number of HTTP requests imgproxy processed.",
               ["requests_total \(requests.load(ordering: .relaxed))"])
        family("status_codes_total", "counter", "A counter of the response status codes.",
               (100..<600).compactMap { status in
                   let count = statuses.value(at: status)
                   return count > 0 ? "status_codes_total{status=\"\(status)\"} \(count)" : nil
               })
        family("errors_total", "counter", "A counter of the occurred errors separated by type.",
               ErrorType.allCases.enumerated().compactMap { index, type in
                   let count = errors.value(at: index)
                   return count > 0 ? "errors_total{type=\"\(type.rawValue)\"} \(count)" : nil
               })
        family("request_duration_seconds", "histogram", "A histogram of the response latency.",
               duration.lines(name: "request_duration_seconds"))
        family("request_span_duration_seconds", "histogram", "A histogram of the request spans duration separated by span name.",
               [("queue", queue), ("downloading_image", downloading), ("processing_image", processing)].flatMap { span, histogram in
                   histogram.lines(name: "request_span_duration_seconds", labels: "span=\"\(span)\"")
               })
        family("workers", "gauge", "A gauge of the number of running workers.", ["workers \(workers)"])
        family("requests_in_progress", "gauge", "A gauge of the number of requests currently being in progress.",
               ["requests_in_progress \(imagesInProgress + queued)"])
        family("images_in_progress", "gauge", "A gauge of the number of images currently being in progress.",
               ["images_in_progress \(imagesInProgress)"])
        family("workers_utilization", "gauge", "A gauge of the workers utilization in percents.",
               ["workers_utilization \(workers > 0 ? Double(imagesInProgress) * 100 / Double(workers) : 0)"])
        return lines
    }
}
