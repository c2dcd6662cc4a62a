import WaymarkCore

/// Topic names, unique ids and device identifiers of the Home Assistant output. They are part of
/// the contract with the user's Home Assistant (its entity registry keys on the unique ids), so
/// they never change for the same site, device, region or gateway.
public struct HomeAssistantNames: Sendable, Equatable {
    public let site: String
    public let topics: Topics
    public let discoveryPrefix: String

    public init(site: String, topicPrefix: String, discoveryPrefix: String) {
        self.site = site
        topics = Topics(prefix: topicPrefix)
        self.discoveryPrefix = discoveryPrefix
    }

    /// The discovery topics' node id, `waymark_<site>`: all of this site's configurations live
    /// under `<discovery prefix>/<component>/waymark_<site>/…/config`.
    public var nodeID: String { "waymark_" + Self.slug(site) }

    /// `<discovery prefix>/<component>/<node id>/<object id>/config`.
    public func configTopic(component: String, objectID: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID)/\(objectID)/config"
    }

    /// Every configuration this site's output may have left on the broker.
    public var allConfigs: String { "\(discoveryPrefix)/+/\(nodeID)/+/config" }
    /// Home Assistant's birth and last-will topic.
    public var homeAssistantStatus: String { "\(discoveryPrefix)/status" }
    /// `waymark homeassistant`'s own status (retained, last will `offline`).
    public var bridgeStatus: String { "\(topics.prefix)/homeassistant/status" }
    /// The state a device's region sensor shows.
    public func deviceState(_ device: DeviceID) -> String { "\(topics.prefix)/homeassistant/devices/\(device)/state" }
    /// Whether a device's entities are available: its shard has a running aggregator
    /// (`HomeAssistantBridge`; `{"state":"online"}` or `offline`, retained).
    public func deviceAvailability(_ device: DeviceID) -> String { "\(topics.prefix)/homeassistant/devices/\(device)/availability" }
    /// Whether the site-wide entities (occupancy) are available: every shard has a running aggregator.
    public var siteAvailability: String { "\(topics.prefix)/homeassistant/availability" }
    /// The device of a `…/homeassistant/devices/<device>/state` topic, or nil.
    public func device(inHomeAssistantStateTopic topic: String) -> DeviceID? {
        let head = statePrefix + "devices/"
        guard topic.hasPrefix(head), topic.hasSuffix("/state") else { return nil }
        let middle = topic.dropFirst(head.count).dropLast("/state".count)
        return middle.isEmpty || middle.contains("/") ? nil : DeviceID(String(middle))
    }
    /// The number a region's occupancy sensor shows.
    public func occupancy(_ region: String) -> String { "\(topics.prefix)/homeassistant/regions/\(region)/occupancy" }
    /// The prefix of every state topic above (removals clear only topics under it).
    public var statePrefix: String { "\(topics.prefix)/homeassistant/" }

    /// The site's Home Assistant device (the hub the others are `via_device` of).
    public var hubIdentifier: String { nodeID }
    public func deviceIdentifier(_ device: DeviceID) -> String { "\(nodeID)_device_\(Self.slug(device.rawValue))" }
    public func regionIdentifier(_ region: String) -> String { "\(nodeID)_region_\(Self.slug(region))" }
    public func gatewayIdentifier(_ gateway: String) -> String { "\(nodeID)_gateway_\(Self.slug(gateway))" }

    /// Object ids (the discovery topic level; the unique id is `<node id>_<object id>`).
    public func deviceObjectID(_ device: DeviceID) -> String { "device_\(Self.slug(device.rawValue))_region" }
    public func regionObjectID(_ region: String) -> String { "region_\(Self.slug(region))_occupancy" }
    public func gatewayObjectID(_ gateway: String) -> String { "gateway_\(Self.slug(gateway))_connectivity" }
    public var aggregatorObjectID: String { "aggregator_connectivity" }
    public func uniqueID(_ objectID: String) -> String { "\(nodeID)_\(objectID)" }

    /// `text` in Home Assistant's id alphabet `[a-zA-Z0-9_-]`, one-to-one: `_` becomes `__`, and
    /// any other character outside the alphabet `_` and its code in hex (`.` → `_2e`, `:` → `_3a`).
    public static func slug(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            case UInt8(ascii: "_"):
                out += "__"
            default:
                out += "_" + Hex.encode([b])
            }
        }
        return out
    }
}
