import WebImage

extension RedisTier: SharedCacheTier {
    /// `"redis"`: the `tier` label of its metrics, and the name its hits carry (``ImageCacheSource/sharedTier(_:)``).
    public static let tierName = "redis"

    /// `true`: Redis coordinates the fleet's fills (``beginFill(forKey:)``).
    public var coordinatesFills: Bool { true }

    /// The counters (``statistics``) and breaker state, as an image server's `/metrics` shows them (`tier="redis"`).
    public var report: SharedTierReport {
        let statistics = self.statistics
        let breakers = breakerState
        var report = SharedTierReport(name: Self.tierName)
        report.hits = statistics.hits
        report.misses = statistics.misses
        report.errors = statistics.errors
        report.nodes = breakers.nodes
        report.openBreakers = breakers.open
        report.breakerOpenings = statistics.breakerOpenings
        report.fillsClaimed = statistics.fillsClaimed
        report.fillsJoined = statistics.fillsJoined
        report.fillWaitsTimedOut = statistics.fillWaitsTimedOut
        return report
    }
}
