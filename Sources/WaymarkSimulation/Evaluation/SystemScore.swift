/// The figures for one system; see `Evaluator` for their definitions.
public struct SystemScore: Hashable, Sendable {
    public var scoredSeconds = 0.0
    public var exactSeconds = 0.0
    public var withinHopSeconds = 0.0
    public var trueVisits = 0
    public var recordedVisits = 0
    public var inferredVisits = 0
    public var matchedTrueVisits = 0
    public var matchedRecordedVisits = 0
    public var pathAccuracy = 1.0
    /// Sorted ascending, seconds.
    public var entryLatencies: [Double] = []
    public var exitLatencies: [Double] = []
    public var exitReportLatencies: [Double] = []
    /// The subset of `exitReportLatencies` for exits into no region (see `Evaluator`).
    public var exitToNoRegionReportLatencies: [Double] = []
    /// Per recorded change to a region: how long after the time it is dated at (the evidence, as
    /// the smoothed history decided) the live region first showed it (0 when it already did).
    public var liveLatencies: [Double] = []
    public var flaps = 0
    /// `flaps` by kind (see `Evaluator`): of stationary devices, of moving devices truly inside
    /// another region, and of moving devices truly between regions.
    public var flapsOfStationaryDevices = 0
    public var flapsInAnotherRegion = 0
    public var flapsBetweenRegions = 0
    public var deviceHours = 0.0

    public init() {}

    public var accuracy: Double { ratio(exactSeconds, scoredSeconds) }
    public var accuracyWithinHop: Double { ratio(withinHopSeconds, scoredSeconds) }
    public var visitRecall: Double { ratio(Double(matchedTrueVisits), Double(trueVisits)) }
    public var visitPrecision: Double { ratio(Double(matchedRecordedVisits), Double(recordedVisits)) }
    public var flapsPerDeviceHour: Double { deviceHours > 0 ? Double(flaps) / deviceHours : 0 }

    public var entryLatencyP50: Double? { Self.percentile(entryLatencies, 0.50) }
    public var entryLatencyP95: Double? { Self.percentile(entryLatencies, 0.95) }
    public var exitLatencyP50: Double? { Self.percentile(exitLatencies, 0.50) }
    public var exitLatencyP95: Double? { Self.percentile(exitLatencies, 0.95) }
    public var exitReportedP50: Double? { Self.percentile(exitReportLatencies, 0.50) }
    public var exitReportedP95: Double? { Self.percentile(exitReportLatencies, 0.95) }
    public var liveLatencyP50: Double? { Self.percentile(liveLatencies, 0.50) }
    public var liveLatencyP95: Double? { Self.percentile(liveLatencies, 0.95) }
    public var exitToNoRegionReportedP50: Double? { Self.percentile(exitToNoRegionReportLatencies, 0.50) }
    public var exitToNoRegionReportedP95: Double? { Self.percentile(exitToNoRegionReportLatencies, 0.95) }

    private func ratio(_ a: Double, _ b: Double) -> Double { b > 0 ? a / b : 1 }

    /// The p-quantile of ascending `values` by linear interpolation between order statistics
    /// (position p·(n−1)); nil when empty.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let position = p * Double(values.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, values.count - 1)
        let f = position - Double(lower)
        return values[lower] + (values[upper] - values[lower]) * f
    }
}

/// The outcome of `waymark evaluate`: Waymark's score, the naive rule's when sightings were given,
/// and what the truth contained.
public struct EvaluationReport: Sendable {
    public var waymark: SystemScore
    public var naive: SystemScore?
    public var devices: Int
    public var trueVisits: Int
    public var deviceHours: Double
    public var exitDelayS: Double

    public init(waymark: SystemScore, naive: SystemScore?, devices: Int, trueVisits: Int, deviceHours: Double, exitDelayS: Double) {
        self.waymark = waymark
        self.naive = naive
        self.devices = devices
        self.trueVisits = trueVisits
        self.deviceHours = deviceHours
        self.exitDelayS = exitDelayS
    }
}
