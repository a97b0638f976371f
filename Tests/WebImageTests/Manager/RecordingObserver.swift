import Synchronization
@testable import WebImage

/// Keeps every event it is sent, for tests to read.
final class RecordingObserver: WebImageObserver {
    private let recorded = Mutex<[WebImageEvent]>([])

    func observe(_ event: WebImageEvent) {
        recorded.withLock { $0.append(event) }
    }

    var events: [WebImageEvent] { recorded.withLock { $0 } }

    var loads: [ImageLoadReport] {
        events.compactMap { if case .loadFinished(let report) = $0 { report } else { nil } }
    }

    var variants: [VariantLoadReport] {
        events.compactMap { if case .variantFinished(let report) = $0 { report } else { nil } }
    }

    var downloads: [DownloadReport] {
        events.compactMap { if case .downloadFinished(let report) = $0 { report } else { nil } }
    }

    var sweeps: [DiskCacheSweepReport] {
        events.compactMap { if case .diskSwept(let report) = $0 { report } else { nil } }
    }

    var retries: [(attempt: Int, error: WebImageError)] {
        events.compactMap { if case .loadRetried(_, let attempt, let error, _) = $0 { (attempt, error) } else { nil } }
    }

    var evictions: [(count: Int, cost: Int)] {
        events.compactMap { if case .memoryEvicted(let count, let cost) = $0 { (count, cost) } else { nil } }
    }
}
