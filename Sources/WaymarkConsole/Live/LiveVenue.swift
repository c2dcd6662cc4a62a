import WaymarkCore

/// What the console knows right now, from the aggregator's retained MQTT messages: each device's
/// live region with its confidence and proximity, and each gateway's last status. Pure: messages
/// in, state out; `LiveFeed` feeds it from the broker.
public struct LiveVenue: Sendable {
    public struct Device: Sendable, Equatable {
        public var id: String
        /// The live region (nil: in none).
        public var currentRegion: String?
        public var confidence: Double?
        /// Proximity to the current region (`immediate`, `near`, `far`, `unknown`), when listed.
        public var proximity: String?
        public var distanceM: Double?
        /// Evidence time of the state, Unix seconds.
        public var updatedAt: Double?
    }

    public struct Gateway: Sendable, Equatable {
        public var id: String
        public var state: String
        public var version: String?
        public var boot: String?
        public var spoolDepth: Int?
        public var spoolDropped: Int?
        /// The status's own time (gateway clock) and when the console received it.
        public var statusTime: Double?
        public var receivedAt: Double
        /// Received minus stated time: how far the gateway's clock is behind (positive) or ahead,
        /// plus delivery delay. Nil for retained messages, whose delivery time says nothing.
        public var clockOffsetS: Double?
    }

    /// An aggregator's retained status (`…/aggregator/status`, or `…/aggregator/status/<shards>`
    /// for a sharded aggregator that does not own shard 0; docs/scaling.md §1).
    public struct Aggregator: Sendable, Equatable {
        /// The status topic's level after `…/aggregator/status` ('' for that topic itself).
        public var key: String
        public var state: String
        public var version: String?
        /// The shards it owns; nil: the whole site (an unsharded aggregator).
        public var shards: [Int]?
        public var shardCount: Int?
        /// The status's own time (absent in the last will) and when the console received it.
        public var statusTime: Double?
        public var receivedAt: Double
    }

    /// Which running aggregator owns each shard (`shardCoverage`).
    public typealias ShardCoverage = WaymarkCore.ShardCoverage

    public let site: Site
    public let prefix: String
    public private(set) var devices: [String: Device] = [:]
    public private(set) var gateways: [String: Gateway] = [:]
    /// Aggregators by status-topic key, online or offline (a clean stop or the last will).
    public private(set) var aggregators: [String: Aggregator] = [:]
    /// Bumped on every change, so watchers can tell whether to send an update.
    public private(set) var version = 0
    /// Messages that could not be read, by cause (logged once per cause by the feed).
    public private(set) var rejected: [String: Int] = [:]

    public init(site: Site, prefix: String) {
        self.site = site
        self.prefix = prefix
    }

    /// The subscriptions that feed this state.
    public var topics: [String] {
        ["\(prefix)/devices/+/state", "\(prefix)/gateways/+/status", "\(prefix)/aggregator/status", "\(prefix)/aggregator/status/+"]
    }

    /// Who owns each shard among the online aggregators; nil when none is online.
    public var shardCoverage: ShardCoverage? {
        ShardCoverage(online: aggregators.values.filter { $0.state == "online" }
            .map { .init(key: $0.key, shards: $0.shards, shardCount: $0.shardCount) })
    }

    /// Devices whose live region is each region (regions without any are absent).
    public var occupancy: [String: Int] {
        var out: [String: Int] = [:]
        for device in devices.values {
            if let region = device.currentRegion { out[region, default: 0] += 1 }
        }
        return out
    }

    /// Applies one message; returns the cause when it was not usable (and changes nothing).
    @discardableResult
    public mutating func apply(topic: String, payload: [UInt8], retained: Bool, receivedAt: Double) -> String? {
        guard topic.hasPrefix(prefix + "/") else { return reject("topic outside the prefix") }
        if let key = Topics(prefix: prefix).aggregatorStatusKey(topic) {
            return applyAggregator(key: key, payload: payload, receivedAt: receivedAt)
        }
        let levels = topic.dropFirst(prefix.count + 1).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 3 else { return reject("unexpected topic") }
        let name = String(levels[1])
        switch (levels[0], levels[2]) {
        case ("devices", "state"):
            if payload.isEmpty {
                // A cleared retained state: the device is gone.
                if devices.removeValue(forKey: name) != nil { version += 1 }
                return nil
            }
            guard let device = LiveMessages.deviceState(payload, topicDevice: name) else { return reject("unreadable device state") }
            if devices[name] != device {
                devices[name] = device
                version += 1
            }
            return nil
        case ("gateways", "status"):
            guard site.gateways.contains(where: { $0.id == name }) else { return reject("gateway not in the site file") }
            guard var gateway = LiveMessages.gatewayStatus(payload, gateway: name, receivedAt: receivedAt) else {
                return reject("unreadable gateway status")
            }
            if retained { gateway.clockOffsetS = nil }
            gateways[name] = gateway
            version += 1
            return nil
        default:
            return reject("unexpected topic")
        }
    }

    private mutating func applyAggregator(key: String, payload: [UInt8], receivedAt: Double) -> String? {
        if payload.isEmpty {
            // A cleared retained status: that aggregator is retired.
            if aggregators.removeValue(forKey: key) != nil { version += 1 }
            return nil
        }
        guard let aggregator = LiveMessages.aggregatorStatus(payload, key: key, receivedAt: receivedAt) else {
            return reject("unreadable aggregator status")
        }
        aggregators[key] = aggregator
        version += 1
        return nil
    }

    private mutating func reject(_ cause: String) -> String {
        rejected[cause, default: 0] += 1
        return cause
    }

    /// Device ids containing `query` (case-insensitive), sorted, at most `limit`.
    public func searchDevices(_ query: String, limit: Int = 50) -> [Device] {
        let q = query.lowercased()
        return devices.values.filter { q.isEmpty || $0.id.lowercased().contains(q) }
            .sorted { $0.id < $1.id }.prefix(limit).map { $0 }
    }
}
