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
/// 16 bytes; `Float` is plenty for dBm.
struct RSSIFilter: Sendable, Hashable, Codable {
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
    /// Recent readings, for the trimmed-mean alternative.
    var window = TrimmedWindow()

    var hasLevel: Bool { variance >= 0 }

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
