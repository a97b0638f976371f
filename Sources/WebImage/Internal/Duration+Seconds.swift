extension Duration {
    /// The duration in seconds, as a `Double` (what URLSession's time-outs, Prometheus histograms and
    /// Unix times want).
    package var secondsValue: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, rounded up, clamped to `Int32` (what `poll(2)` takes); 0 for none left.
    package var pollMilliseconds: Int32 {
        guard self > .zero else { return 0 }
        return Int32(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 + 1)
    }
}
