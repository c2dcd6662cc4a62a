/// The site file's `calibration:` section: what `waymark site calibrate --write` measured on a
/// recording of the venue, the fusion engine's starting point for self-calibration
/// (docs/fusion.md). Every key is optional.
public struct SiteCalibration: Hashable, Sendable {
    /// dB added to every device's measured power (advertised or `default_measured_power_dbm`).
    public var measuredPowerOffsetDB: Double = 0
    /// Whether the file gives `measured_power_offset_db` (the venue's level was measured), as
    /// against the default 0 (the level is the configured measured power's guess).
    public var measuredPowerOffsetGiven = false
    /// The path-loss exponent; replaces `fusion.path_loss_exponent` as the starting point.
    public var pathLossExponent: Double?
    /// What a wall between two rooms costs (dB).
    public var roomLossDB: Double?
    /// Per gateway id: dB added to its readings on top of its `rssi_offset_db`.
    public var gatewayOffsetsDB: [String: Double] = [:]

    public init() {}
}

extension SiteDocument {
    /// `calibration: { measured_power_offset_db, path_loss_exponent, room_loss_db, gateway_offsets_db: {gw: dB} }`.
    public struct CalibrationEntry: Decodable, Sendable {
        public var measuredPowerOffsetDB: Double?
        public var pathLossExponent: Double?
        public var roomLossDB: Double?
        public var gatewayOffsetsDB: [String: Double]?

        enum CodingKeys: String, CodingKey, CaseIterable {
            case measuredPowerOffsetDB = "measured_power_offset_db"
            case pathLossExponent = "path_loss_exponent"
            case roomLossDB = "room_loss_db"
            case gatewayOffsetsDB = "gateway_offsets_db"
        }
    }
}

extension SiteValidator {
    /// Checks the `calibration:` section against the gateways; problems as (path, message).
    static func calibration(_ c: SiteDocument.CalibrationEntry?, gateways: Set<String>) -> (SiteCalibration, [(String, String)]) {
        var out = SiteCalibration()
        var problems: [(String, String)] = []
        guard let c else { return (out, problems) }
        if let v = c.measuredPowerOffsetDB {
            if v.isFinite && abs(v) <= 30 { out.measuredPowerOffsetDB = v; out.measuredPowerOffsetGiven = true } else {
                problems.append(("calibration.measured_power_offset_db", "must be between -30 and 30 dB, got \(v); rerun `waymark site calibrate --write`"))
            }
        }
        if let v = c.pathLossExponent {
            if v >= 1.5 && v <= 6 { out.pathLossExponent = v } else {
                problems.append(("calibration.path_loss_exponent", "must be between 1.5 and 6, got \(v)"))
            }
        }
        if let v = c.roomLossDB {
            if v >= 0 && v <= 30 { out.roomLossDB = v } else {
                problems.append(("calibration.room_loss_db", "must be between 0 and 30 dB, got \(v)"))
            }
        }
        for (id, v) in (c.gatewayOffsetsDB ?? [:]).sorted(by: { $0.key < $1.key }) {
            if !gateways.contains(id) {
                problems.append(("calibration.gateway_offsets_db.\(id)", "unknown gateway '\(id)'; remove it or rerun `waymark site calibrate --write`"))
            } else if !(v.isFinite && abs(v) <= 30) {
                problems.append(("calibration.gateway_offsets_db.\(id)", "must be between -30 and 30 dB, got \(v)"))
            } else {
                out.gatewayOffsetsDB[id] = v
            }
        }
        return (out, problems)
    }
}
