public import WaymarkJSON

/// One rule of the site file's `notifications:` section (docs/notifications.md): which regions and
/// devices it watches, when it fires, how often, and what it says. Built by `SiteValidator`, so
/// every region it names exists and every value is in range; evaluated by WaymarkNotify.
public struct NotificationRule: Sendable {
    /// When a rule fires, for a device and the rule's set of regions taken together.
    public enum Trigger: String, Sendable, CaseIterable, Codable {
        /// The device's recorded region moved into the set (from outside it).
        case enter
        /// The device's recorded region moved out of the set (after `absenceS` away, when set).
        case exit
        /// The device has been in the set for `dwellS` without leaving.
        case dwell
        /// The device entered the set after at least `absenceS` away from it.
        case `return`
    }

    /// Unique among the site's rules; in MQTT payloads, webhook bodies and the `notifications` table.
    public var id: String
    public var trigger: Trigger
    /// The ids of the regions the rule watches (the union of its `match` selectors).
    public var regions: Set<String>
    public var devices: NotificationDeviceFilter
    /// `dwell`: seconds in the set before it fires.
    public var dwellS: Double
    /// `return`: the absence before an entry that makes it a return. `exit`: how long the device
    /// must stay away before the goodbye is sent (0: at once); an entry before that cancels it.
    public var absenceS: Double
    /// After a notification, the same rule sends none to the same device for this long.
    public var cooldownS: Double
    /// Local times (site time zone) at which the rule stays silent.
    public var quietHours: [QuietHours]
    /// Entries whose recorded region has a lower probability do not count as being in the set.
    public var minConfidence: Double
    public var message: MessageTemplate
    /// Free-form `data:` passed through unchanged in every notification (object keys sorted).
    public var data: JSONValue?
    /// Where the aggregator POSTs each notification (`http` or `https`); nil: MQTT and the table only.
    public var webhook: String?

    public init(id: String, trigger: Trigger, regions: Set<String>, devices: NotificationDeviceFilter = .init(),
                dwellS: Double = 0, absenceS: Double = 0, cooldownS: Double = NotificationRule.defaultCooldownS,
                quietHours: [QuietHours] = [], minConfidence: Double = 0, message: MessageTemplate? = nil,
                data: JSONValue? = nil, webhook: String? = nil) {
        self.id = id
        self.trigger = trigger
        self.regions = regions
        self.devices = devices
        self.dwellS = dwellS
        self.absenceS = absenceS
        self.cooldownS = cooldownS
        self.quietHours = quietHours
        self.minConfidence = minConfidence
        self.message = message ?? MessageTemplate.defaultMessage(for: trigger)
        self.data = data
        self.webhook = webhook
    }

    /// `cooldown_s` when the rule does not set one: one notification per device and rule per hour.
    public static let defaultCooldownS = 3600.0
}

/// Which devices a rule applies to: by kind of id and by allow-list (exact ids, or iBeacon
/// identities matched hierarchically on UUID, UUID + major, UUID + major + minor). Empty lists
/// mean no restriction.
public struct NotificationDeviceFilter: Hashable, Sendable {
    public var kinds: Set<DeviceID.Kind> = []
    public var ids: Set<DeviceID> = []
    public var ibeacons: [IBeaconIdentity] = []

    public init(kinds: Set<DeviceID.Kind> = [], ids: Set<DeviceID> = [], ibeacons: [IBeaconIdentity] = []) {
        self.kinds = kinds
        self.ids = ids
        self.ibeacons = ibeacons
    }

    /// True when `device` is of an allowed kind and, if there is an allow-list, on it.
    public func matches(_ device: DeviceID) -> Bool {
        if !kinds.isEmpty && !kinds.contains(device.kind) { return false }
        if ids.isEmpty && ibeacons.isEmpty { return true }
        if ids.contains(device) { return true }
        guard !ibeacons.isEmpty, let beacon = device.ibeaconParts else { return false }
        return ibeacons.contains { $0.matches(uuid: beacon.uuid, major: beacon.major, minor: beacon.minor) }
    }
}

/// A daily quiet period in the site's local time: `[from, to)` in minutes after midnight, across
/// midnight when `to` is earlier than `from` (22:00–07:00).
public struct QuietHours: Hashable, Sendable {
    public var fromMinute: Int
    public var toMinute: Int

    public init(fromMinute: Int, toMinute: Int) {
        self.fromMinute = fromMinute
        self.toMinute = toMinute
    }

    /// Whether the local minute of the day `minute` (0…1439) falls in the period.
    public func contains(minuteOfDay minute: Int) -> Bool {
        fromMinute < toMinute ? (minute >= fromMinute && minute < toMinute) : (minute >= fromMinute || minute < toMinute)
    }

    /// `22:00–07:00`.
    public var description: String { "\(Self.clock(fromMinute))–\(Self.clock(toMinute))" }

    /// Parses `HH:MM` (00:00…24:00) into minutes after midnight.
    public static func minutes(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]), (0...24).contains(h), (0...59).contains(m),
              h < 24 || m == 0 else { return nil }
        return h * 60 + m
    }

    static func clock(_ minutes: Int) -> String {
        let h = minutes / 60, m = minutes % 60
        return (h < 10 ? "0" : "") + "\(h):" + (m < 10 ? "0" : "") + "\(m)"
    }
}

extension DeviceID {
    /// The (uuid, major, minor) of an `ibeacon:` id; nil for other kinds.
    public var ibeaconParts: (uuid: BeaconUUID, major: UInt16, minor: UInt16)? {
        guard kind == .ibeacon else { return nil }
        let parts = rawValue.split(separator: ":")
        guard parts.count == 4, let uuid = BeaconUUID(String(parts[1])), let major = UInt16(parts[2]),
              let minor = UInt16(parts[3]) else { return nil }
        return (uuid, major, minor)
    }
}
