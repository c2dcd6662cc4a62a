/// Retained on a service's status topic (`…/aggregator/status`, `…/homeassistant/status`), with a
/// last will saying `offline`: whether the service is connected to the broker now. Home Assistant
/// reads it as the availability of the entities the service feeds (docs/home-assistant.md).
public struct ServiceStatus: Hashable, Sendable, Codable {
    public var state: GatewayStatus.State
    /// `waymark-aggregator`, `waymark-homeassistant`.
    public var service: String
    public var site: String
    public var version: String?
    /// When the status was published (Unix seconds); absent in the last will.
    public var t: Double?
    /// A sharded aggregator's shards (`shards.own`), the site's shard count, and a random id of
    /// this run of it: aggregators read each other's to catch two owners of one shard.
    public var shards: [Int]?
    public var shardCount: Int?
    public var instance: String?

    public init(state: GatewayStatus.State, service: String, site: String, version: String? = nil, t: Double? = nil,
                shards: [Int]? = nil, shardCount: Int? = nil, instance: String? = nil) {
        self.state = state
        self.service = service
        self.site = site
        self.version = version
        self.t = t
        self.shards = shards
        self.shardCount = shardCount
        self.instance = instance
    }

    enum CodingKeys: String, CodingKey {
        case state, service, site, version, t, shards, instance
        case shardCount = "shard_count"
    }
}

extension Topics {
    /// `…/aggregator/status` (retained, last will `offline`): the aggregator is connected.
    public var aggregatorStatus: String { "\(prefix)/aggregator/status" }
    /// The status topic of an aggregator that owns `shards` of a sharded site and not shard 0:
    /// `…/aggregator/status/<shards joined by '-'>` (`…/aggregator/status/1-3`). The owner of shard 0
    /// (and an aggregator owning the whole site) uses ``aggregatorStatus``, which Home Assistant's
    /// availability follows; one last will per connection means one topic per aggregator.
    public func aggregatorStatus(owning shards: [Int]) -> String {
        shards.contains(0) || shards.isEmpty ? aggregatorStatus : aggregatorStatus + "/" + shards.map(String.init).joined(separator: "-")
    }
    /// The key of an aggregator's status topic: '' for ``aggregatorStatus``, "1-3" for
    /// `…/aggregator/status/1-3`; nil for any other topic.
    public func aggregatorStatusKey(_ topic: String) -> String? {
        let head = aggregatorStatus
        if topic == head { return "" }
        guard topic.hasPrefix(head + "/") else { return nil }
        let key = topic.dropFirst(head.count + 1)
        return key.isEmpty || key.contains("/") ? nil : String(key)
    }
    /// Every device's state, for consumers that follow all of them.
    public var allDeviceStates: String { "\(prefix)/devices/+/state" }
    /// The device id in a `…/devices/<device>/state` topic, or nil.
    public func device(inStateTopic topic: String) -> DeviceID? {
        let head = prefix + "/devices/"
        guard topic.hasPrefix(head), topic.hasSuffix("/state") else { return nil }
        let middle = topic.dropFirst(head.count).dropLast("/state".count)
        guard !middle.contains("/") else { return nil }
        return DeviceID(String(middle))
    }
}
