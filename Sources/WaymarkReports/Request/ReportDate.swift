/// Parses the `--from` and `--to` values of `waymark report`.
///
/// Accepted forms: a date `YYYY-MM-DD` (midnight UTC), or ISO-8601 date and time
/// `YYYY-MM-DDTHH:MM[:SS[.fff]]` followed by `Z`, `±HH:MM`, `±HHMM` or nothing (UTC). A space
/// may stand for the `T`. The result is Unix seconds, which keeps this type free of time zones.
public enum ReportDate {
    /// The accepted forms, for error messages.
    public static let formsDescription =
        "YYYY-MM-DD (e.g. 2026-06-01) or ISO-8601 date and time (e.g. 2026-06-01T09:30:00Z, 2026-06-01T11:30+02:00)"

    /// A parsed value: the instant, and whether the text was a bare date (which `--to` treats as
    /// "through the end of that day").
    public struct Parsed: Equatable, Sendable {
        public var seconds: Int64
        public var isDateOnly: Bool

        public init(seconds: Int64, isDateOnly: Bool) {
            self.seconds = seconds
            self.isDateOnly = isDateOnly
        }
    }

    /// Parses `text`, or throws an error naming `option` and the accepted forms.
    public static func parse(_ text: String, option: String) throws(ReportError) -> Parsed {
        guard let parsed = parse(text) else {
            throw ReportError(.badArgument, "\(option) '\(text)' is not a date; use \(formsDescription)")
        }
        return parsed
    }

    /// Parses `text`, or returns nil when it is not one of the accepted forms or not a real date.
    public static func parse(_ text: String) -> Parsed? {
        let s = Array(text.utf8)
        var i = 0
        func number(_ digits: Int) -> Int? {
            guard i + digits <= s.count else { return nil }
            var v = 0
            for k in i..<(i + digits) {
                guard s[k] >= 0x30 && s[k] <= 0x39 else { return nil }
                v = v * 10 + Int(s[k] - 0x30)
            }
            i += digits
            return v
        }
        func take(_ c: UInt8) -> Bool {
            guard i < s.count, s[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), take(0x2D), let month = number(2), take(0x2D), let day = number(2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        let midnight = Int64(daysFromEpoch(year: year, month: month, day: day)) * 86_400
        if i == s.count { return Parsed(seconds: midnight, isDateOnly: true) }

        guard take(0x54) || take(0x74) || take(0x20), let hour = number(2), take(0x3A), let minute = number(2),
              hour < 24, minute < 60 else { return nil }
        var second = 0
        if take(0x3A) {
            guard let sec = number(2), sec < 60 else { return nil }
            second = sec
            if take(0x2E) || take(0x2C) {
                let start = i
                while i < s.count, s[i] >= 0x30 && s[i] <= 0x39 { i += 1 }
                guard i > start else { return nil }  // fractions are accepted and truncated
            }
        }
        var offset = 0
        if take(0x5A) || take(0x7A) {
            offset = 0
        } else if i < s.count, s[i] == 0x2B || s[i] == 0x2D {
            let sign = s[i] == 0x2D ? -1 : 1
            i += 1
            guard let oh = number(2), oh <= 14 else { return nil }
            _ = take(0x3A)
            guard let om = number(2), om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        }
        guard i == s.count else { return nil }
        return Parsed(seconds: midnight + Int64(hour * 3600 + minute * 60 + second - offset), isDateOnly: false)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` for Unix seconds, the form passed to PostgreSQL and shown in titles.
    public static func iso(_ seconds: Int64) -> String {
        let days = Int(seconds.floorDiv(86_400))
        let rest = Int(seconds - Int64(days) * 86_400)
        let (y, m, d) = civil(fromDays: days)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let year = String(repeating: "0", count: max(0, 4 - String(y).count)) + String(y)
        return "\(year)-\(two(m))-\(two(d))T\(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60))Z"
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}

extension Int64 {
    /// Division rounding towards negative infinity.
    func floorDiv(_ d: Int64) -> Int64 {
        let q = self / d
        return (self % d != 0 && (self < 0) != (d < 0)) ? q - 1 : q
    }
}
