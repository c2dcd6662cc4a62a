/// A 1-D Kalman filter over one (device, gateway) RSSI stream, with outlier gating.
///
/// The state is the RSSI level (dBm) and its variance. Between readings the variance grows by
/// `processNoise · Δt` (the device may have moved); a reading of variance `measurementNoise / weight`
/// (a window mean of `weight` readings counts as that many) is blended in by the Kalman gain.
/// A reading further than `gate` standard deviations from the prediction is rejected as an
/// outlier, unless it is the `maxRun + 1`-th rejected reading in a row: then the filter accepts that
/// the level really changed and re-centres on it. A stream silent for longer than `staleness`
/// restarts from its next reading.
///
/// 32 bytes; `Float` is plenty for dBm. The trimmed-mean alternative's window (40 bytes) is held
/// out of line, and only while that smoothing is chosen: every device keeps a filter for each
/// gateway of its monitored set, and inline the window, always empty with the default Kalman
/// filter, made each link (gateway, distance, filter) 72 bytes instead of 40
/// (`waymark-bench fusion`: 3,571 → 2,938 bytes per device).
struct RSSIFilter: Sendable, Hashable {
    struct Tuning: Sendable {
        var processNoise: Float
        var measurementNoise: Float
        var gateSquared: Float
        var maxRun: Int32
        var staleness: Double
        /// > 0: use the trimmed mean over this many seconds instead of the Kalman filter.
        var trimmedWindow: Double = 0
    }

    enum Outcome { case accepted, rejected }

    /// Smoothed RSSI level (dBm).
    private(set) var level: Float = 0
    private var variance: Float = -1  // < 0: no reading yet
    /// Consecutive rejected readings.
    private var run: Int32 = 0
    /// Time of the last reading, accepted or not (Unix seconds).
    var lastTime: Double = -.infinity
    /// Recent readings, for the trimmed-mean alternative: no element, or one holding readings.
    private var windowStorage: [TrimmedWindow] = []

    /// Recent readings, for the trimmed-mean alternative (empty with the Kalman filter).
    var window: TrimmedWindow {
        get { windowStorage.first ?? TrimmedWindow() }
        set {
            if newValue.isEmpty {
                windowStorage = []
            } else if windowStorage.isEmpty {
                windowStorage = [newValue]
            } else {
                windowStorage[0] = newValue
            }
        }
    }

    var hasLevel: Bool { variance >= 0 }

    /// Bytes held out of line: the trimmed-mean window with its array header, when there is one.
    var outOfLineBytes: Int { windowStorage.isEmpty ? 0 : 32 + MemoryLayout<TrimmedWindow>.stride }

    /// Whether the stream was heard within `staleness` of `time`.
    func isFresh(at time: Double, staleness: Double) -> Bool { hasLevel && time - lastTime <= staleness }

    mutating func update(rssi: Float, weight: Float, at time: Double, tuning: Tuning) -> Outcome {
        if tuning.trimmedWindow > 0 {
            if !isFresh(at: time, staleness: tuning.staleness) { window = TrimmedWindow() }
            lastTime = max(lastTime, time)
            window.add(rssi, at: time, window: tuning.trimmedWindow)
            level = window.mean(at: lastTime, window: tuning.trimmedWindow) ?? rssi
            variance = 0
            return .accepted
        }
        let r = tuning.measurementNoise / max(weight, 1)
        guard hasLevel, time - lastTime <= tuning.staleness else {
            level = rssi; variance = r; run = 0; lastTime = max(lastTime, time)
            return .accepted
        }
        let dt = Float(max(0, time - lastTime))
        lastTime = max(lastTime, time)
        var p = variance + tuning.processNoise * dt
        let innovation = rssi - level
        let s = p + r
        if innovation * innovation > tuning.gateSquared * s {
            if run < tuning.maxRun {
                run += 1
                variance = p
                return .rejected
            }
            // The level really moved: trust the new readings.
            p += innovation * innovation
        }
        run = 0
        let gain = p / (p + r)
        level += gain * innovation
        variance = (1 - gain) * p
        return .accepted
    }
}

/// Encoded as before the window moved out of line (`window` always present, empty with the Kalman
/// filter), so that checkpoints written by earlier versions restore and those written now restore
/// in them: the compact binary format fingerprints every field.
extension RSSIFilter: Codable {
    private enum CodingKeys: String, CodingKey { case level, variance, run, lastTime, window }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        level = try c.decode(Float.self, forKey: .level)
        variance = try c.decode(Float.self, forKey: .variance)
        run = try c.decode(Int32.self, forKey: .run)
        lastTime = try c.decode(Double.self, forKey: .lastTime)
        window = try c.decode(TrimmedWindow.self, forKey: .window)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(level, forKey: .level)
        try c.encode(variance, forKey: .variance)
        try c.encode(run, forKey: .run)
        try c.encode(lastTime, forKey: .lastTime)
        try c.encode(window, forKey: .window)
    }
}
