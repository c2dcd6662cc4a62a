/// The edge → aggregator wire format on `…/gateways/<gw>/sightings` (DESIGN.md §4): one batch per
/// gateway per window, identified by (gateway, boot, seq) for de-duplication and acks. With shards
/// (`ShardLayout`) one batch per gateway, shard and window on `…/sightings/<shard>`, identified by
/// (gateway, boot, shard, seq): each shard numbers its own.
public struct SightingBatch: Hashable, Sendable, Codable {
    /// Schema version of this payload; the aggregator rejects others.
    public static let currentVersion = 1

    public var v: Int
    public var gateway: String
    /// Random id chosen at each start of the edge agent; `seq` restarts at 1 with each boot.
    public var boot: String
    public var seq: UInt64
    /// Window start and end, Unix seconds, by the gateway's clock.
    public var start: Double
    public var end: Double
    public var sightings: [Entry]

    public init(gateway: String, boot: String, seq: UInt64, start: Double, end: Double, sightings: [Entry]) {
        self.v = Self.currentVersion
        self.gateway = gateway
        self.boot = boot
        self.seq = seq
        self.start = start
        self.end = end
        self.sightings = sightings
    }

    /// One device's aggregate over the window.
    public struct Entry: Hashable, Sendable, Codable {
        public var device: DeviceID
        public var count: Int
        public var rssiMax: Double
        public var rssiMean: Double
        public var rssiLast: Double
        /// Advertised measured power at 1 m (iBeacon/AltBeacon byte, Eddystone tx at 0 m − 41).
        public var tx: Double?
        public var first: Double
        public var last: Double
        public var telemetry: Telemetry?

        public init(device: DeviceID, count: Int, rssiMax: Double, rssiMean: Double, rssiLast: Double,
                    tx: Double?, first: Double, last: Double, telemetry: Telemetry? = nil) {
            self.device = device
            self.count = count
            self.rssiMax = rssiMax
            self.rssiMean = rssiMean
            self.rssiLast = rssiLast
            self.tx = tx
            self.first = first
            self.last = last
            self.telemetry = telemetry
        }

        enum CodingKeys: String, CodingKey {
            case device, count, tx, first, last, telemetry
            case rssiMax = "rssi_max"
            case rssiMean = "rssi_mean"
            case rssiLast = "rssi_last"
        }
    }

    /// Eddystone-TLM style telemetry, when the device sends it.
    public struct Telemetry: Hashable, Sendable, Codable {
        public var batteryMV: Int?
        public var temperatureC: Double?

        public init(batteryMV: Int?, temperatureC: Double?) {
            self.batteryMV = batteryMV
            self.temperatureC = temperatureC
        }

        enum CodingKeys: String, CodingKey {
            case batteryMV = "battery_mv"
            case temperatureC = "temperature_c"
        }
    }
}

/// Retained on `…/gateways/<gw>/status`; the broker publishes `{"state":"offline",…}` as the last will.
public struct GatewayStatus: Hashable, Sendable, Codable {
    public enum State: String, Sendable, Codable { case online, offline }
    public var state: State
    public var gateway: String
    public var version: String?
    public var boot: String?
    public var spoolDepth: Int?
    public var spoolDropped: Int?
    /// `on`, `off`, `error` or `replay`.
    public var scan: String?
    public var t: Double?

    public init(state: State, gateway: String, version: String? = nil, boot: String? = nil, spoolDepth: Int? = nil,
                spoolDropped: Int? = nil, scan: String? = nil, t: Double? = nil) {
        self.state = state
        self.gateway = gateway
        self.version = version
        self.boot = boot
        self.spoolDepth = spoolDepth
        self.spoolDropped = spoolDropped
        self.scan = scan
        self.t = t
    }

    enum CodingKeys: String, CodingKey {
        case state, gateway, version, boot, scan, t
        case spoolDepth = "spool_depth"
        case spoolDropped = "spool_dropped"
    }
}

/// Published by the aggregator on `…/gateways/<gw>/ack` after a commit: every batch of `boot` with
/// a sequence number up to and including `seq` is stored.
///
/// With `resend_from`/`resend_to` it is also a resend request: the aggregator received batches of
/// `boot` after a gap and holds them until the gap is filled, so the gateway should send the batches
/// `resend_from ..< resend_to` it still has again now, without waiting for its resend timer (the
/// batches the aggregator holds are not asked for). Gateways that ignore the two fields still
/// resend after their timer; nothing is lost, only later.
public struct GatewayAck: Hashable, Sendable, Codable {
    public var boot: String
    public var seq: UInt64
    /// First sequence number missing at the aggregator (with `resendTo`).
    public var resendFrom: UInt64?
    /// The missing range ends before this sequence number (the first one the aggregator holds).
    public var resendTo: UInt64?
    public init(boot: String, seq: UInt64, resendFrom: UInt64? = nil, resendTo: UInt64? = nil) {
        self.boot = boot
        self.seq = seq
        self.resendFrom = resendFrom
        self.resendTo = resendTo
    }

    /// The sequence numbers to resend now (empty for a plain ack).
    public var resendRange: Range<UInt64> {
        guard let from = resendFrom, let to = resendTo, from < to else { return 0..<0 }
        return from..<to
    }

    enum CodingKeys: String, CodingKey {
        case boot, seq
        case resendFrom = "resend_from"
        case resendTo = "resend_to"
    }
}

/// MQTT topic names (DESIGN.md §4), under a configurable prefix (default `waymark/v1/<site>`).
public struct Topics: Hashable, Sendable {
    public var prefix: String

    public init(prefix: String) { self.prefix = prefix }
    public init(site: String) { self.prefix = "waymark/v1/\(site)" }

    /// A gateway's batches: `…/sightings` unsharded (`shard` nil), `…/sightings/<shard>` in a
    /// sharded layout (`ShardLayout`).
    public func sightings(_ gateway: String, shard: Int? = nil) -> String {
        "\(prefix)/gateways/\(gateway)/sightings" + (shard.map { "/\($0)" } ?? "")
    }
    public func status(_ gateway: String) -> String { "\(prefix)/gateways/\(gateway)/status" }
    /// The aggregator's acks to a gateway, per shard in a sharded layout like ``sightings(_:shard:)``.
    public func ack(_ gateway: String, shard: Int? = nil) -> String {
        "\(prefix)/gateways/\(gateway)/ack" + (shard.map { "/\($0)" } ?? "")
    }
    public func deviceState(_ device: DeviceID) -> String { "\(prefix)/devices/\(device)/state" }
    public func deviceMonitored(_ device: DeviceID) -> String { "\(prefix)/devices/\(device)/monitored" }
    public var events: String { "\(prefix)/events" }
    /// Every notification the site's rules send (QoS 1, not retained).
    public var notifications: String { "\(prefix)/notifications" }
    /// The notifications about one device (QoS 1, not retained).
    public func deviceNotifications(_ device: DeviceID) -> String { "\(prefix)/devices/\(device)/notifications" }
    public var allSightings: String { "\(prefix)/gateways/+/sightings" }
    /// Every gateway's batches of one shard.
    public func allSightings(shard: Int) -> String { "\(prefix)/gateways/+/sightings/\(shard)" }
    /// Every gateway's batches of every shard (`…/sightings/+`, not the unsharded topic).
    public var allShardedSightings: String { "\(prefix)/gateways/+/sightings/+" }
    public var allStatus: String { "\(prefix)/gateways/+/status" }

    /// The gateway level of a `…/gateways/<gw>/<kind>` topic, or nil when it is not one (nor is
    /// one with a shard level: ``gatewayTopic(_:)``).
    public func gateway(inTopic topic: String) -> (gateway: String, kind: String)? {
        guard let (gateway, kind, shard) = gatewayTopic(topic), shard == nil else { return nil }
        return (gateway, kind)
    }

    /// A gateway topic with its shard level: `…/gateways/<gw>/<kind>` (shard nil) or
    /// `…/gateways/<gw>/<kind>/<shard>` with a decimal shard below `ShardLayout.maxCount` written
    /// without leading zeros. Nil for anything else.
    public func gatewayTopic(_ topic: String) -> (gateway: String, kind: String, shard: Int?)? {
        let head = prefix + "/gateways/"
        guard topic.hasPrefix(head) else { return nil }
        let rest = topic.dropFirst(head.count).split(separator: "/", omittingEmptySubsequences: false)
        guard rest.count == 2 || rest.count == 3, !rest[0].isEmpty else { return nil }
        guard rest.count == 3 else { return (String(rest[0]), String(rest[1]), nil) }
        let level = rest[2]
        guard !level.isEmpty, level.count <= 4, level.allSatisfy(\.isASCII), level.allSatisfy(\.isNumber),
              level == "0" || !level.hasPrefix("0"), let shard = Int(level), shard < ShardLayout.maxCount else { return nil }
        return (String(rest[0]), String(rest[1]), shard)
    }
}
