public import WaymarkCore

extension MessageTemplate {
    /// The values a message's placeholders take for one notification.
    public struct Values: Sendable {
        public var device: DeviceID
        public var rule: String
        public var event: NotificationRule.Trigger
        public var region: String
        public var regionName: String
        public var dwellS: Double?
        public var absenceS: Double?
        public var local: LocalTime
    }

    /// The message with every placeholder filled in (`{dwell}` is empty when the event has none).
    public func render(_ v: Values) -> String {
        var out = ""
        for segment in segments {
            switch segment {
            case .text(let s): out += s
            case .field(let f):
                switch f {
                case .device: out += v.device.rawValue
                case .rule: out += v.rule
                case .event: out += v.event.rawValue
                case .region: out += v.region
                case .regionName: out += v.regionName
                case .dwell: out += v.dwellS.map(Self.duration) ?? ""
                case .dwellS: out += v.dwellS.map { String(Int($0.rounded())) } ?? ""
                case .absence: out += v.absenceS.map(Self.duration) ?? ""
                case .absenceS: out += v.absenceS.map { String(Int($0.rounded())) } ?? ""
                case .time: out += v.local.clock
                case .date: out += v.local.date
                case .datetime: out += v.local.iso8601
                }
            }
        }
        return out
    }

    /// A duration for people: `45 s`, `12 min`, `1 h 05 min`, `3 d 4 h`.
    public static func duration(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded()))
        if s < 60 { return "\(s) s" }
        if s < 3600 { return "\(s / 60) min" }
        if s < 86_400 { return "\(s / 3600) h " + LocalTime.two(s / 60 % 60) + " min" }
        return "\(s / 86_400) d \(s / 3600 % 24) h"
    }
}
