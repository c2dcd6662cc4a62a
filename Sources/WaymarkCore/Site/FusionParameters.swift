/// The `fusion:` section of the site file: every tunable of the fusion engine, with its default.
/// Keys in the file are the snake_case names given on each property. Tuning the engine for a venue
/// is a change to this section only.
public struct FusionParameters: Hashable, Sendable, Codable {
    // MARK: Region state, monitored set, journeys

    /// `exit_delay_s`: seconds without qualifying evidence before a region is left (Core Location
    /// uses about 30 s).
    public var exitDelayS: Double = 30
    /// `monitored_set_size`: regions per device whose state is evaluated (Core Location's limit is 20).
    public var monitoredSetSize: Int = 20
    /// `journey_timeout_s`: seconds outside every region that end a journey.
    public var journeyTimeoutS: Double = 600
    /// `journey_max_regions`: regions kept per journey (bounds per-device memory); later regions of a
    /// very long journey are still reported as visits but no longer listed in the journey.
    public var journeyMaxRegions: Int = 200
    /// `forget_after_s`: how long after its last sighting a device that is in no region, with its
    /// journey closed and nothing left to decide, is forgotten: its state is freed, its checkpoint
    /// deleted and its retained device state cleared, so memory and per-second work follow the
    /// devices present rather than every device ever heard. A device heard again starts afresh
    /// (its history is kept). 0 keeps every device for the life of the aggregator.
    public var forgetAfterS: Double = 3600

    // MARK: Distance and proximity

    /// `default_measured_power_dbm`: RSSI at 1 m when the advert carries none.
    public var defaultMeasuredPowerDBm: Double = -59
    /// `path_loss_exponent`: n in RSSI = P1m − 10·n·log10(d).
    public var pathLossExponent: Double = 2.0
    /// `immediate_m` / `near_m`: proximity bucket boundaries.
    public var immediateM: Double = 0.5
    public var nearM: Double = 3.0
    /// `staleness_s`: proximity becomes unknown when a region's gateways have not heard the device
    /// for this long; a current region that is stale loses against any fresh inside region.
    public var stalenessS: Double = 5
    /// `gateway_silence_s`: a gateway that sent nothing for this long counts as offline.
    public var gatewaySilenceS: Double = 30

    // MARK: RSSI smoothing per device and gateway

    /// `smoothing`: `kalman` (a 1-D Kalman filter with outlier gating, the parameters below) or
    /// `trimmed_mean` (the mean of the readings of the last `trimmed_window_s` without the
    /// highest and the lowest, at most 8 readings).
    public var smoothing: String = "kalman"
    /// `trimmed_window_s`: the trimmed mean's window.
    public var trimmedWindowS: Double = 2

    /// `rssi_process_noise_db2_per_s`: how fast the true RSSI may drift (dB² per second); larger
    /// follows movement faster, smaller smooths more.
    public var rssiProcessNoise: Double = 6
    /// `rssi_measurement_noise_db2`: variance of one RSSI reading (dB²).
    public var rssiMeasurementNoise: Double = 25
    /// `outlier_gate_sigma`: readings further than this many standard deviations from the
    /// prediction are rejected as outliers.
    public var outlierGateSigma: Double = 3
    /// `outlier_max_run`: after this many consecutive rejected readings the filter accepts the new
    /// level (the device really moved).
    public var outlierMaxRun: Int = 3

    // MARK: Current region (the probabilistic tracker, docs/fusion.md)

    /// `walking_speed_mps`: how fast people walk in this venue (m/s). The tracker lets a device
    /// reach a region further along the beacon graph only as fast as walking through the regions
    /// in between allows (1.4 m/s is an unhurried adult; use less for crowded or elderly venues).
    public var walkingSpeedMPS: Double = 1.4
    /// `smoothing_lag_s`: how long the recorded history waits for later evidence before deciding
    /// where a device was (fixed-lag smoothing). The live region is published at once either way;
    /// a longer lag gives fewer short false visits and later visits in the database.
    public var smoothingLagS: Double = 3
    /// `exit_margin_db`: a sighting keeps an inside region's exit timer from running only when its
    /// distance is within the radius shortened by this margin, expressed as path loss in dB (a
    /// factor 10^(−margin/(10·n)) on the radius); entering still takes the full radius. 0 keeps
    /// one threshold for both. A device walking away from a region reads inside it for a while
    /// after it truly left whenever the signal happens to run strong; the margin starts its exit
    /// buffer closer to the moment it crossed the radius.
    public var exitMarginDB: Double = 0
    /// `reacquire_s`: how long a device with a current region must be heard inside a region outside
    /// its monitored set, and inside none of its set, before its set is rebuilt there.
    public var reacquireS: Double = 5
    /// `self_calibration`: learn the venue's measured-power correction, path-loss exponent, room
    /// loss and per-gateway offsets from the readings (docs/fusion.md). Off keeps the site file's
    /// values as they are (for a venue calibrated by hand, or with `waymark site calibrate`).
    public var selfCalibration: Bool = true

    /// Keys of the file's `fusion:` section that earlier versions used and this one ignores (the
    /// tracker replaced them); `waymark site check` warns about each.
    public internal(set) var retiredKeysPresent: [String] = []

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case exitDelayS = "exit_delay_s"
        case monitoredSetSize = "monitored_set_size"
        case journeyTimeoutS = "journey_timeout_s"
        case journeyMaxRegions = "journey_max_regions"
        case forgetAfterS = "forget_after_s"
        case defaultMeasuredPowerDBm = "default_measured_power_dbm"
        case pathLossExponent = "path_loss_exponent"
        case immediateM = "immediate_m"
        case nearM = "near_m"
        case stalenessS = "staleness_s"
        case gatewaySilenceS = "gateway_silence_s"
        case smoothing
        case trimmedWindowS = "trimmed_window_s"
        case rssiProcessNoise = "rssi_process_noise_db2_per_s"
        case rssiMeasurementNoise = "rssi_measurement_noise_db2"
        case outlierGateSigma = "outlier_gate_sigma"
        case outlierMaxRun = "outlier_max_run"
        case walkingSpeedMPS = "walking_speed_mps"
        case smoothingLagS = "smoothing_lag_s"
        case reacquireS = "reacquire_s"
        case exitMarginDB = "exit_margin_db"
        case selfCalibration = "self_calibration"
    }

    /// Keys of the margin-and-dwell current-region rule that the probabilistic tracker replaced.
    public enum RetiredKey: String, CodingKey, CaseIterable {
        case switchMarginDB = "switch_margin_db"
        case switchDwellS = "switch_dwell_s"
        case strongSwitchMarginDB = "strong_switch_margin_db"
        case strongSwitchDwellS = "strong_switch_dwell_s"
        case challengerWithinRadius = "challenger_within_radius"
        case nonadjacentMarginDB = "nonadjacent_margin_db"
        case nonadjacentDwellS = "nonadjacent_dwell_s"

        /// What replaces it, for the warning.
        public var replacement: String {
            switch self {
            case .switchMarginDB, .strongSwitchMarginDB, .nonadjacentMarginDB:
                "the tracker weighs every gateway's readings with a likelihood instead of a margin; nothing to set"
            case .switchDwellS, .strongSwitchDwellS, .nonadjacentDwellS:
                "use smoothing_lag_s (how long the recorded history waits for later evidence) and walking_speed_mps"
            case .challengerWithinRadius:
                "the tracker considers every region of the monitored set; nothing to set"
            }
        }
    }

    /// The keys the site file may use in `fusion:` (retired ones are accepted with a warning).
    public static var keys: [String] { CodingKeys.allCases.map(\.rawValue) + RetiredKey.allCases.map(\.rawValue) }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func get<T: Decodable>(_ key: CodingKeys, _ path: WritableKeyPath<FusionParameters, T>, in p: inout FusionParameters) throws {
            if let v = try c.decodeIfPresent(T.self, forKey: key) { p[keyPath: path] = v }
        }
        var p = FusionParameters()
        try get(.exitDelayS, \.exitDelayS, in: &p)
        try get(.monitoredSetSize, \.monitoredSetSize, in: &p)
        try get(.journeyTimeoutS, \.journeyTimeoutS, in: &p)
        try get(.journeyMaxRegions, \.journeyMaxRegions, in: &p)
        try get(.forgetAfterS, \.forgetAfterS, in: &p)
        try get(.defaultMeasuredPowerDBm, \.defaultMeasuredPowerDBm, in: &p)
        try get(.pathLossExponent, \.pathLossExponent, in: &p)
        try get(.immediateM, \.immediateM, in: &p)
        try get(.nearM, \.nearM, in: &p)
        try get(.stalenessS, \.stalenessS, in: &p)
        try get(.gatewaySilenceS, \.gatewaySilenceS, in: &p)
        try get(.smoothing, \.smoothing, in: &p)
        try get(.trimmedWindowS, \.trimmedWindowS, in: &p)
        try get(.rssiProcessNoise, \.rssiProcessNoise, in: &p)
        try get(.rssiMeasurementNoise, \.rssiMeasurementNoise, in: &p)
        try get(.outlierGateSigma, \.outlierGateSigma, in: &p)
        try get(.outlierMaxRun, \.outlierMaxRun, in: &p)
        try get(.walkingSpeedMPS, \.walkingSpeedMPS, in: &p)
        try get(.smoothingLagS, \.smoothingLagS, in: &p)
        try get(.reacquireS, \.reacquireS, in: &p)
        try get(.exitMarginDB, \.exitMarginDB, in: &p)
        try get(.selfCalibration, \.selfCalibration, in: &p)
        let retired = try decoder.container(keyedBy: RetiredKey.self)
        p.retiredKeysPresent = RetiredKey.allCases.filter { retired.contains($0) }.map(\.rawValue)
        self = p
    }

    /// Problems with the values, as (key, message with the fix).
    public func problems() -> [(key: String, message: String)] {
        var out: [(String, String)] = []
        func positive(_ v: Double, _ key: CodingKeys) {
            if !(v > 0) || !v.isFinite { out.append((key.rawValue, "must be a positive number, got \(v)")) }
        }
        func nonNegative(_ v: Double, _ key: CodingKeys) {
            if !(v >= 0) || !v.isFinite { out.append((key.rawValue, "must be zero or a positive number, got \(v)")) }
        }
        positive(exitDelayS, .exitDelayS)
        positive(journeyTimeoutS, .journeyTimeoutS)
        positive(stalenessS, .stalenessS)
        positive(gatewaySilenceS, .gatewaySilenceS)
        positive(immediateM, .immediateM)
        positive(nearM, .nearM)
        if !(trimmedWindowS > 0 && trimmedWindowS <= 60) {
            out.append((CodingKeys.trimmedWindowS.rawValue, "must be more than 0 and at most 60 seconds, got \(trimmedWindowS)"))
        }
        if smoothing != "kalman" && smoothing != "trimmed_mean" {
            out.append((CodingKeys.smoothing.rawValue, "must be kalman or trimmed_mean, got '\(smoothing)'"))
        }
        positive(rssiProcessNoise, .rssiProcessNoise)
        positive(rssiMeasurementNoise, .rssiMeasurementNoise)
        positive(outlierGateSigma, .outlierGateSigma)
        if !(walkingSpeedMPS >= 0.2 && walkingSpeedMPS <= 5) {
            out.append((CodingKeys.walkingSpeedMPS.rawValue, "must be between 0.2 and 5 m/s (people walk at about 1.4), got \(walkingSpeedMPS)"))
        }
        if !(smoothingLagS >= 0 && smoothingLagS <= 60) {
            out.append((CodingKeys.smoothingLagS.rawValue, "must be between 0 and 60 seconds (3 is the default; 0 records the live estimate), got \(smoothingLagS)"))
        }
        nonNegative(reacquireS, .reacquireS)
        if !(exitMarginDB >= 0 && exitMarginDB <= 10) {
            out.append((CodingKeys.exitMarginDB.rawValue, "must be between 0 and 10 dB (0: the exit timer runs from the last sighting within the radius), got \(exitMarginDB)"))
        }
        if monitoredSetSize < 1 || monitoredSetSize > 1000 {
            out.append((CodingKeys.monitoredSetSize.rawValue, "must be between 1 and 1000 (Core Location allows 20), got \(monitoredSetSize)"))
        }
        if !(forgetAfterS == 0 || (forgetAfterS >= 60 && forgetAfterS.isFinite)) {
            out.append((CodingKeys.forgetAfterS.rawValue, "must be 0 (never forget a device) or at least 60 seconds (3600 is the default), got \(forgetAfterS)"))
        }
        if journeyMaxRegions < 1 { out.append((CodingKeys.journeyMaxRegions.rawValue, "must be at least 1, got \(journeyMaxRegions)")) }
        if outlierMaxRun < 0 { out.append((CodingKeys.outlierMaxRun.rawValue, "must be 0 or more, got \(outlierMaxRun)")) }
        if !(pathLossExponent >= 1.5 && pathLossExponent <= 6) {
            out.append((CodingKeys.pathLossExponent.rawValue, "must be between 1.5 and 6 (2 is free space, 2.5–3.5 is typical indoors), got \(pathLossExponent)"))
        }
        if !(defaultMeasuredPowerDBm >= -100 && defaultMeasuredPowerDBm <= 20) {
            out.append((CodingKeys.defaultMeasuredPowerDBm.rawValue, "must be between -100 and 20 dBm (typical beacons: -59), got \(defaultMeasuredPowerDBm)"))
        }
        if immediateM >= nearM { out.append((CodingKeys.nearM.rawValue, "must be larger than immediate_m (\(immediateM)), got \(nearM)")) }
        return out
    }
}
