/// Durations written as on the command line: `90s`, `30m`, `2h`, `1h30m`, `1.5h`, or a bare
/// number of seconds.
public enum DurationText {
    /// Seconds, or nil when `text` is not a duration.
    public static func seconds(_ text: String) -> Double? {
        if let plain = Double(text) { return plain >= 0 && plain.isFinite ? plain : nil }
        var total = 0.0
        var number = ""
        var sawUnit = false
        for c in text {
            if c.isNumber || c == "." {
                number.append(c)
                continue
            }
            let unit: Double
            switch c {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86400
            default: return nil
            }
            guard let v = Double(number), v >= 0 else { return nil }
            total += v * unit
            number = ""
            sawUnit = true
        }
        guard sawUnit, number.isEmpty, total.isFinite else { return nil }
        return total
    }
}
