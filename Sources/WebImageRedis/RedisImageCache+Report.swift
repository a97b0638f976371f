import WebImage

extension RedisImageCache: SharedTierReporting {
    /// The Redis tier's counters (``RedisTier/statistics``) and breaker state, as an image server's
    /// `/metrics` shows them (`tier="redis"`).
    public var sharedTierReport: SharedTierReport {
        let statistics = shared.statistics
        let breakers = shared.breakerState
        var report = SharedTierReport(name: "redis")
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
