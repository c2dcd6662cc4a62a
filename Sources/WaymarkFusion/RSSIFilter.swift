#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

/// The last 8 readings of one (device, gateway) pair, packed into 34 bytes: RSSI in 0.5 dB steps
/// (one byte each) and times in 10 ms from an epoch (two bytes each). The trimmed mean drops the
/// highest and the lowest reading of the window when it holds 4 or more, which rejects single
/// outliers without a model.
struct TrimmedWindow: Sendable, Hashable, Codable {
    /// Byte i: −RSSI × 2 of reading i.
    private var rssi: UInt64 = 0
    /// 16-bit lane i: 10 ms ticks since `epoch` of reading i (lanes 0–3 in `ticksLow`).
    private var ticksLow: UInt64 = 0
    private var ticksHigh: UInt64 = 0
    private var epoch: Double = 0
    private var count: UInt8 = 0
    private var next: UInt8 = 0

    private func value(_ i: Int) -> Float { -Float((rssi >> (8 * i)) & 0xFF) / 2 }

    private func tick(_ i: Int) -> UInt16 {
        UInt16(truncatingIfNeeded: (i < 4 ? ticksLow : ticksHigh) >> (16 * (i % 4)))
    }

    private mutating func setTick(_ i: Int, _ v: UInt16) {
        let shift = UInt64(16 * (i % 4))
        let cleared = ~(UInt64(0xFFFF) << shift)
        if i < 4 { ticksLow = ticksLow & cleared | UInt64(v) << shift } else { ticksHigh = ticksHigh & cleared | UInt64(v) << shift }
    }

    mutating func add(_ value: Float, at t: Double, window: Double) {
        if count == 0 { epoch = t }
        if (t - epoch) * 100 > 60_000 {
            // Rebase so that offsets fit; readings older than the window no longer matter.
            let newEpoch = t - window
            for i in 0..<8 { setTick(i, UInt16(max(0, (epoch + Double(tick(i)) / 100 - newEpoch) * 100))) }
            epoch = newEpoch
        }
        let i = Int(next)
        let byte = UInt64(max(0, min(255, (-value * 2).rounded())))
        rssi = rssi & ~(UInt64(0xFF) << UInt64(8 * i)) | byte << UInt64(8 * i)
        setTick(i, UInt16(max(0, (t - epoch) * 100)))
        next = (next + 1) % 8
        count = min(8, count + 1)
    }

    func mean(at t: Double, window: Double) -> Float? {
        var sum: Float = 0, lo = Float.infinity, hi = -Float.infinity, n: Float = 0
        for k in 0..<Int(count) {
            let i = (Int(next) + 7 - k) % 8
            guard epoch + Double(tick(i)) / 100 >= t - window else { continue }
            let v = value(i)
            sum += v; lo = min(lo, v); hi = max(hi, v); n += 1
        }
        guard n > 0 else { return nil }
        return n >= 4 ? (sum - lo - hi) / (n - 2) : sum / n
    }
}

/// The log-distance path-loss model and the proximity buckets (DESIGN.md §3 "Distance", "Proximity").
struct PathLoss: Sendable {
    var exponent: Double
    var immediateM: Double
    var nearM: Double

    /// Distance in metres from a smoothed RSSI already corrected by the gateway offset.
    func distance(rssi: Double, measuredPower: Double) -> Double {
        pow10((measuredPower - rssi) / (10 * exponent))
    }

    func proximity(distance: Double) -> Proximity {
        distance < immediateM ? .immediate : distance < nearM ? .near : .far
    }
}

/// 10^x (the C library's `exp`; no Foundation).
@inline(__always)
func pow10(_ x: Double) -> Double { exp(x * 2.302585092994046) }

/// log10(x).
@inline(__always)
func logTen(_ x: Double) -> Double { log(x) / 2.302585092994046 }
