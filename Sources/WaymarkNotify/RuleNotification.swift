public import WaymarkCore
import WaymarkJSON

/// One notification a rule sent: what `waymark replay` writes as a `type: notification` line, the
/// aggregator stores in the `notifications` table and publishes on MQTT, and a webhook receives.
public struct RuleNotification: Sendable, Hashable {
    /// Deterministic (`NotificationID`): the same rule, device, kind and evidence time give the
    /// same id in replay, in the aggregator and after a restart, so receivers can de-duplicate.
    public var id: String
    public var site: String
    public var rule: String
    public var kind: NotificationRule.Trigger
    public var device: DeviceID
    public var region: String
    public var regionName: String
    /// The time of the evidence (Unix seconds): the entry, the exit, or the moment the dwell was reached.
    public var t: Double
    /// `t` in the site's time zone, ISO 8601 with the offset.
    public var localTime: String
    public var message: String
    /// How long the device had been in the rule's regions (exit, dwell); nil for enter and return.
    public var dwellS: Double?
    /// How long it had been away (return); nil otherwise.
    public var absenceS: Double?
    /// The tracker's probability of the region entered (enter, return, dwell; nil when unknown).
    public var confidence: Double?
    /// The rule's `data:` as compact JSON, or nil.
    public var data: String?
    /// Whether the rule has a webhook (the aggregator then POSTs this notification).
    public var hasWebhook: Bool

    /// The JSON document sent everywhere (MQTT, webhooks, replay, the table's `payload`):
    /// `{"type":"notification","id",…,"site","rule","kind","device","region","region_name","t",
    /// "local_time","message","dwell_s","absence_s","confidence","data"}` in that order.
    public var json: [UInt8] {
        let members: [(String, JSONValue)] = [
            ("type", .string("notification")), ("id", .string(id)), ("site", .string(site)), ("rule", .string(rule)),
            ("kind", .string(kind.rawValue)), ("device", .string(device.rawValue)), ("region", .string(region)),
            ("region_name", .string(regionName)), ("t", .double(Self.milli(t))), ("local_time", .string(localTime)),
            ("message", .string(message)),
            ("dwell_s", dwellS.map { .double(Self.milli($0)) } ?? .null),
            ("absence_s", absenceS.map { .double(Self.milli($0)) } ?? .null),
            ("confidence", confidence.map { .double(Self.milli($0)) } ?? .null),
        ]
        var out: [UInt8] = []
        out.reserveCapacity(384)
        JSONValue.object(members).render(into: &out)
        // `data` is already JSON: spliced in as the last member.
        out.removeLast()
        out.append(contentsOf: #","data":"#.utf8)
        out.append(contentsOf: (data ?? "null").utf8)
        out.append(0x7D)
        return out
    }

    /// Rounded to the millisecond, as the replay output writes times.
    static func milli(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
}
