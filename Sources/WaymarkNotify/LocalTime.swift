import Foundation

/// Wall-clock time in the site's time zone, for quiet hours and the local times in messages.
/// Only the zone's UTC offset at an instant comes from Foundation (the tz database); the calendar
/// arithmetic is done here, so the same instant always gives the same text.
public struct SiteClock: Sendable {
    public let identifier: String
    private let zone: TimeZone

    /// The clock of `identifier` (an IANA name); UTC when the system does not know it (the site
    /// loader rejects unknown names, so that only happens to hand-built sites).
    public init(timeZone identifier: String) {
        self.identifier = identifier
        zone = TimeZone(identifier: identifier) ?? TimeZone(secondsFromGMT: 0)!
    }

    /// Local calendar fields of the instant `t` (Unix seconds).
    public func local(_ t: Double) -> LocalTime {
        let whole = t.rounded(.down)
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: whole))
        return LocalTime(unixSeconds: Int64(whole) + Int64(offset), offsetS: offset)
    }
}

/// A local date and time with its UTC offset.
public struct LocalTime: Hashable, Sendable {
    public var year: Int, month: Int, day: Int
    public var hour: Int, minute: Int, second: Int
    /// Seconds east of UTC.
    public var offsetS: Int

    /// From local seconds since 1970-01-01T00:00 (civil calendar, proleptic Gregorian).
    init(unixSeconds local: Int64, offsetS: Int) {
        let days = Int(local >= 0 ? local / 86_400 : (local - 86_399) / 86_400)
        let secs = Int(local - Int64(days) * 86_400)
        hour = secs / 3600
        minute = secs / 60 % 60
        second = secs % 60
        // Howard Hinnant's days-to-civil algorithm.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        day = doy - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        self.offsetS = offsetS
    }

    /// Minutes after local midnight (0…1439).
    public var minuteOfDay: Int { hour * 60 + minute }

    /// `14:05`.
    public var clock: String { Self.two(hour) + ":" + Self.two(minute) }
    /// `2026-06-01`.
    public var date: String { String(year) + "-" + Self.two(month) + "-" + Self.two(day) }
    /// `2026-06-01T14:05:09+02:00` (`Z` for UTC).
    public var iso8601: String {
        let sign = offsetS < 0 ? "-" : "+"
        let off = abs(offsetS) / 60
        let zone = offsetS == 0 ? "Z" : sign + Self.two(off / 60) + ":" + Self.two(off % 60)
        return date + "T" + clock + ":" + Self.two(second) + zone
    }

    static func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
}
