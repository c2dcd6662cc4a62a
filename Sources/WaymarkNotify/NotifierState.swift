public import WaymarkCore

/// What the notifier remembers about one device, per rule (by rule id): the part of the device's
/// checkpoint that makes cool-downs, dwell timers and delayed goodbyes survive a restart. The
/// aggregator stores it as JSON in `notification_state` in the same transaction as the rows and
/// high-water marks; unknown keys are ignored and missing ones take their defaults, so a newer
/// aggregator reads an older state.
public struct NotifierDeviceState: Codable, Sendable, Equatable {
    public var rules: [String: RuleState] = [:]

    public init(rules: [String: RuleState] = [:]) { self.rules = rules }
}

/// A device with respect to one rule's set of regions.
public struct RuleState: Codable, Sendable, Equatable {
    /// In the rule's regions (entered with at least the rule's `min_confidence`).
    public var inside = false
    /// The rule region the device is in, or the last one it was in.
    public var region: String?
    /// The tracker's probability of the region when the device entered the set.
    public var confidence: Double?
    /// When the current (or last) stay in the rule's regions began.
    public var enteredAt: Double?
    /// When the device last left the rule's regions.
    public var leftAt: Double?
    /// When this rule last sent this device a notification (the cool-down runs from here).
    public var lastSentAt: Double?
    /// A decision waiting for time to pass: `dwell` — the time the dwell is reached; `exit` with
    /// `absence_s` — the time the device will have been away long enough for the goodbye.
    public var due: Double?

    public init() {}

    enum CodingKeys: String, CodingKey {
        case inside, region, confidence, due
        case enteredAt = "entered_at"
        case leftAt = "left_at"
        case lastSentAt = "last_sent_at"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        inside = try c.decodeIfPresent(Bool.self, forKey: .inside) ?? false
        region = try c.decodeIfPresent(String.self, forKey: .region)
        confidence = try c.decodeIfPresent(Double.self, forKey: .confidence)
        enteredAt = try c.decodeIfPresent(Double.self, forKey: .enteredAt)
        leftAt = try c.decodeIfPresent(Double.self, forKey: .leftAt)
        lastSentAt = try c.decodeIfPresent(Double.self, forKey: .lastSentAt)
        due = try c.decodeIfPresent(Double.self, forKey: .due)
    }
}

/// One device's notifier state, as checkpointed.
public struct NotifierCheckpoint: Codable, Sendable, Equatable {
    public var device: DeviceID
    public var state: NotifierDeviceState

    public init(device: DeviceID, state: NotifierDeviceState) {
        self.device = device
        self.state = state
    }
}

/// Why a rule that fired sent nothing.
public enum SuppressionReason: String, Sendable, CaseIterable {
    /// The rule notified the same device less than `cooldown_s` before.
    case cooldown
    /// The local time was within the rule's `quiet_hours`.
    case quietHours = "quiet_hours"
}

/// Notifications sent and suppressed, per rule.
public struct NotificationCounters: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        public var sent = 0
        public var suppressed: [SuppressionReason: Int] = [:]
    }

    public var rules: [String: Rule] = [:]

    public var sent: Int { rules.values.reduce(0) { $0 + $1.sent } }
    public func suppressed(_ reason: SuppressionReason) -> Int { rules.values.reduce(0) { $0 + ($1.suppressed[reason] ?? 0) } }
}
