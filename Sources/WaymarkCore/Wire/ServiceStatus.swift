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

    public init(state: GatewayStatus.State, service: String, site: String, version: String? = nil, t: Double? = nil) {
        self.state = state
        self.service = service
        self.site = site
        self.version = version
        self.t = t
    }
}

extension Topics {
    /// `…/aggregator/status` (retained, last will `offline`): the aggregator is connected.
    public var aggregatorStatus: String { "\(prefix)/aggregator/status" }
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
