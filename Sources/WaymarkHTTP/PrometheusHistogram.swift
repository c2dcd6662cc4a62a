/// One histogram read back from the Prometheus text format that `MetricsEndpoint` serves: its
/// cumulative buckets, count and sum, and quantiles interpolated within a bucket as Prometheus'
/// `histogram_quantile` does. For programs that read a running service's figures (the demo's live
/// latency, the benchmarks), not for the services themselves.
public struct PrometheusHistogram: Sendable {
    /// Cumulative counts by upper bound (`le`), ascending; the last bound is +∞.
    public private(set) var buckets: [(le: Double, count: Int)] = []
    public private(set) var count = 0
    public private(set) var sum = 0.0

    /// The histogram `name` (without `_bucket`) in `text`; nil when it has no buckets there. A
    /// histogram with labels other than `le` is read as if they were one series.
    public init?(_ text: String, name: String) {
        for part in text.split(separator: "\n") where part.hasPrefix(name) {
            let line = String(part)
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let value = Double(parts[parts.count - 1]) else { continue }
            if line.hasPrefix(name + "_bucket{"), let le = line.firstRange(of: "le=\"") {
                let bound = line[le.upperBound...].prefix { $0 != "\"" }
                buckets.append((bound == "+Inf" ? .infinity : Double(bound) ?? .nan, Int(value)))
            } else if line.hasPrefix(name + "_count") {
                count = Int(value)
            } else if line.hasPrefix(name + "_sum") {
                sum = value
            }
        }
        buckets.sort { $0.le < $1.le }
        if buckets.isEmpty { return nil }
    }

    /// Observations at most `bound` (the largest bucket bound not above it).
    public func cumulative(atMost bound: Double) -> Int { buckets.last { $0.le <= bound }?.count ?? 0 }

    /// The mean observation (nil when there is none).
    public var mean: Double? { count > 0 ? sum / Double(count) : nil }

    /// The `q` quantile, interpolated linearly within its bucket; +∞ when it lies in the last,
    /// open bucket, nil without observations.
    public func quantile(_ q: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = q * Double(count)
        var lower = 0.0, below = 0
        for b in buckets {
            if Double(b.count) >= rank {
                if b.le.isInfinite { return .infinity }
                let share = b.count > below ? (rank - Double(below)) / Double(b.count - below) : 0
                return lower + share * (b.le - lower)
            }
            lower = b.le
            below = b.count
        }
        return nil
    }

    /// The last finite bucket bound (what "> N s" means for a quantile in the open bucket).
    public var largestFiniteBound: Double { buckets.last { $0.le.isFinite }?.le ?? 0 }
}
