import WebImage

extension S3Tier: SharedCacheTier {
    /// `"s3"`: the `tier` label of its metrics, and the name its hits carry (``ImageCacheSource/sharedTier(_:)``).
    public static let tierName = "s3"

    /// `true`: a PUT is slow; stores reach the bucket in the background.
    public var writesInBackground: Bool { true }

    /// The counters for `/metrics` (`tier="s3"`): hits, misses (expired hits among them), errors, one
    /// node, and whether its breaker is open.
    public var report: SharedTierReport {
        let statistics = self.statistics
        var report = SharedTierReport(name: Self.tierName)
        report.hits = statistics.hits
        report.misses = statistics.misses + statistics.expiredHits
        report.errors = statistics.errors
        report.nodes = 1
        report.openBreakers = statistics.isSkippingStore ? 1 : 0
        report.breakerOpenings = statistics.breakerOpenings
        return report
    }

    /// Every ``S3TierConfig/sweepInterval``, ``removeExpired(now:)``, until the calling task is
    /// cancelled; without an interval, waits.
    public func run() async {
        guard let interval = config.sweepInterval else { return await waitForCancellation() }
        while (try? await Task.sleep(for: interval)) != nil { await removeExpired() }
    }
}
