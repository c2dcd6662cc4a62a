/// The `fusion:` section of the site file: every tunable of the fusion engine, with its default.
/// Keys in the file are the snake_case names given on each property.
public struct FusionParameters: Hashable, Sendable, Codable {
    /// `exit_delay_s`: seconds without qualifying evidence before a region is left (Core Location
    /// uses about 30 s).
    public var exitDelayS: Double = 30
    /// `monitored_set_size`: regions per device whose state is evaluated (Core Location's limit is 20).
    public var monitoredSetSize: Int = 20
    /// `journey_timeout_s`: seconds outside every region that end a journey.
    public var journeyTimeoutS: Double = 600
    /// `default_measured_power_dbm`: RSSI at 1 m when the advert carries none.
    public var defaultMeasuredPowerDBm: Double = -59
    /// `path_loss_exponent`: n in RSSI = P1m − 10·n·log10(d).
    public var pathLossExponent: Double = 2.5
    /// `immediate_m` / `near_m`: proximity bucket boundaries.
    public var immediateM: Double = 0.5
    public var nearM: Double = 3.0
    /// `staleness_s`: proximity becomes unknown when a region's gateways have not heard the device
    /// for this long.
    public var stalenessS: Double = 10
    /// `gateway_silence_s`: a gateway that sent nothing for this long counts as offline.
    public var gatewaySilenceS: Double = 30

    public init() {}

    enum CodingKeys: String, CodingKey, CaseIterable {
        case exitDelayS = "exit_delay_s"
        case monitoredSetSize = "monitored_set_size"
        case journeyTimeoutS = "journey_timeout_s"
        case defaultMeasuredPowerDBm = "default_measured_power_dbm"
        case pathLossExponent = "path_loss_exponent"
        case immediateM = "immediate_m"
        case nearM = "near_m"
        case stalenessS = "staleness_s"
        case gatewaySilenceS = "gateway_silence_s"
    }

    /// The keys the site file may use in `fusion:`.
    public static var keys: [String] { CodingKeys.allCases.map(\.rawValue) }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = FusionParameters()
        exitDelayS = try c.decodeIfPresent(Double.self, forKey: .exitDelayS) ?? d.exitDelayS
        monitoredSetSize = try c.decodeIfPresent(Int.self, forKey: .monitoredSetSize) ?? d.monitoredSetSize
        journeyTimeoutS = try c.decodeIfPresent(Double.self, forKey: .journeyTimeoutS) ?? d.journeyTimeoutS
        defaultMeasuredPowerDBm = try c.decodeIfPresent(Double.self, forKey: .defaultMeasuredPowerDBm) ?? d.defaultMeasuredPowerDBm
        pathLossExponent = try c.decodeIfPresent(Double.self, forKey: .pathLossExponent) ?? d.pathLossExponent
        immediateM = try c.decodeIfPresent(Double.self, forKey: .immediateM) ?? d.immediateM
        nearM = try c.decodeIfPresent(Double.self, forKey: .nearM) ?? d.nearM
        stalenessS = try c.decodeIfPresent(Double.self, forKey: .stalenessS) ?? d.stalenessS
        gatewaySilenceS = try c.decodeIfPresent(Double.self, forKey: .gatewaySilenceS) ?? d.gatewaySilenceS
    }

    /// Problems with the values, as (key, message with the fix).
    public func problems() -> [(key: String, message: String)] {
        var out: [(String, String)] = []
        func positive(_ v: Double, _ key: CodingKeys) {
            if !(v > 0) || !v.isFinite { out.append((key.rawValue, "must be a positive number of seconds or metres, got \(v)")) }
        }
        positive(exitDelayS, .exitDelayS)
        positive(journeyTimeoutS, .journeyTimeoutS)
        positive(stalenessS, .stalenessS)
        positive(gatewaySilenceS, .gatewaySilenceS)
        positive(immediateM, .immediateM)
        positive(nearM, .nearM)
        if monitoredSetSize < 1 { out.append((CodingKeys.monitoredSetSize.rawValue, "must be at least 1, got \(monitoredSetSize)")) }
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
