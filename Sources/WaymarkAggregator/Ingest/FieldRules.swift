/// What each field of a sighting batch and a gateway status may hold: the limits checked at ingest
/// so that nothing reaches PostgreSQL that it would refuse (schema 0003/0004 column types) or
/// that no real gateway can mean. A value outside them gets the message rejected with the reason
/// returned (docs/aggregator.md, "Rejections"); nothing is repaired.
public enum FieldRules {
    /// Longest `boot`, `version` (and any other stored free text), in UTF-8 bytes.
    public static let maxTextBytes = 128
    /// Longest device id, in bytes: the canonical forms are at most about 60 (`anon:` ids from the
    /// edge 21), but the `anon:` grammar alone has no bound, and a key longer than a B-tree index
    /// row (about 2.7 kB) is refused by PostgreSQL.
    public static let maxDeviceIDBytes = 128
    /// RSSI and advertised tx power, dBm: a signed byte in the Bluetooth HCI (stored as `real`).
    public static let dBmRange: ClosedRange<Double> = -128...127
    /// Eddystone-TLM battery voltage, mV (an unsigned 16-bit field).
    public static let batteryRange: ClosedRange<Double> = 0...65_535
    /// Eddystone-TLM temperature, °C (a signed 8.8 fixed-point field).
    public static let temperatureRange: ClosedRange<Double> = -128...128
    /// `spool_depth` is an `integer` column.
    public static let spoolDepthRange: ClosedRange<Double> = 0...Double(Int32.max)
    /// `spool_dropped` is a `bigint` column; 2⁵³ keeps it exact as a JSON number.
    public static let spoolDroppedRange: ClosedRange<Double> = 0...9_007_199_254_740_992
    /// A status's own time `t` (the gateway's clock, stored as `reported_at`): 1970-01-01 … 2100-01-01.
    /// An unset clock (1970) is kept — that is how the health report shows it — but nothing a
    /// `timestamptz` cannot hold or no clock can show.
    public static let reportedTimeRange: ClosedRange<Double> = 0...4_102_444_800
    /// The scanner states a status may report.
    public static let scanValues: Set<String> = ["on", "off", "error", "replay"]
    /// Longest topic gateway level kept in `gateway_rejections` (Unicode scalars).
    public static let maxLabelScalars = 64

    /// Nil when `text` is fine as stored text; otherwise the reason. Required text must not be empty.
    public static func checkText(_ text: String, required: Bool = true) -> RejectReason? {
        let utf8 = text.utf8
        if utf8.isEmpty { return required ? .badText : nil }
        guard utf8.count <= maxTextBytes else { return .badText }
        for b in utf8 where b < 0x20 || b == 0x7F { return .badText }
        return nil
    }

    /// True for a finite value in `dBmRange` (NaN fails both comparisons); the per-sighting hot path.
    @inline(__always) public static func isDBm(_ value: Double) -> Bool { value >= -128 && value <= 127 }

    /// Nil when `value` is finite, within `range` and (when `integer`) a whole number.
    public static func checkNumber(_ value: Double, in range: ClosedRange<Double>, integer: Bool = false) -> RejectReason? {
        guard value.isFinite, range.contains(value) else { return .outOfRange }
        if integer && value != value.rounded() { return .outOfRange }
        return nil
    }

    /// The topic's gateway level as it may be stored and logged with a rejection (the topic is the
    /// sender's choice): control characters removed, at most `maxLabelScalars` scalars.
    public static func label(_ gateway: String) -> String {
        var clean = true
        var n = 0
        for s in gateway.unicodeScalars {
            n += 1
            if s.value < 0x20 || s.value == 0x7F || n > maxLabelScalars { clean = false; break }
        }
        if clean { return gateway }
        var out = String.UnicodeScalarView()
        for s in gateway.unicodeScalars where s.value >= 0x20 && s.value != 0x7F {
            if out.count == maxLabelScalars { break }
            out.append(s)
        }
        return String(out)
    }
}
