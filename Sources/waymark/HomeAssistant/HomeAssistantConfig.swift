import WaymarkCore
import WaymarkHomeAssistant
import WaymarkMQTT
import WaymarkService

/// `waymark homeassistant`'s settings (documented for operators in deploy/homeassistant.example.yaml
/// and docs/home-assistant.md). Loaded from flags > `WAYMARK_HOMEASSISTANT_<KEY>` > YAML file >
/// these defaults.
struct HomeAssistantConfig: Sendable {
    /// `site`: the site file (region names and floors, gateways).
    var sitePath: String
    /// `topic_prefix`: default `waymark/v1/<site id>`, as the aggregator's.
    var topicPrefix: String?
    /// `discovery_prefix`: Home Assistant's MQTT discovery prefix.
    var discoveryPrefix = "homeassistant"
    /// `devices`: the allow-list, `DEVICE_ID` or `DEVICE_ID=Name` each; empty by default.
    var devices: [HomeAssistantDevice] = []
    /// `regions`: an occupancy sensor per region.
    var regions = true
    /// `gateways`: a connectivity sensor per gateway.
    var gateways = true
    /// `cleanup_wait_s`: at start, how long to collect the retained configurations of earlier runs
    /// before removing those no longer wanted.
    var cleanupWaitS = 2.0
    /// `mqtt.*`; `mqtt.client_id` defaults to `waymark-homeassistant-<site>`.
    var mqtt = MQTTSettings()
    var metricsHost = "127.0.0.1"
    var metricsPort = 9467
    var logLevel = "info"

    static let keys = [
        "site", "topic_prefix", "discovery_prefix", "devices", "regions", "gateways", "cleanup_wait_s",
        "metrics.host", "metrics.port", "log.level",
    ] + MQTTSettings.keys
    static let secretKeys = MQTTSettings.secretKeys

    static func load(_ layers: ConfigLayers) throws -> HomeAssistantConfig {
        func at(_ key: String) -> String { layers.raw(key).map { layers.where_(key, $0.source) } ?? key }
        func check(_ ok: Bool, _ key: String, _ why: String) throws {
            guard ok else { throw ConfigLayers.ConfigError("\(at(key)): \(why)") }
        }
        guard let site = layers.optionalString("site"), !site.isEmpty else {
            throw ConfigLayers.ConfigError("'site' is required: pass --site, set WAYMARK_HOMEASSISTANT_SITE or add `site:` to the config file")
        }
        var c = HomeAssistantConfig(sitePath: site)
        c.topicPrefix = layers.optionalString("topic_prefix")
        c.discoveryPrefix = layers.string("discovery_prefix", default: c.discoveryPrefix)
        try check(ForeignGateway.isTopicName(c.discoveryPrefix), "discovery_prefix",
                  "'\(c.discoveryPrefix)' is not a topic prefix; write Home Assistant's discovery prefix without wildcards or a trailing '/' (its default is homeassistant)")
        if let list = layers.optionalString("devices") {
            var seen = Set<DeviceID>()
            for entry in list.split(separator: ",").map(String.init) where !entry.allSatisfy(\.isWhitespace) {
                switch HomeAssistantDevice.parse(entry) {
                case .failure(let error): throw ConfigLayers.ConfigError("\(at("devices")): \(error.description)")
                case .success(let device):
                    try check(seen.insert(device.id).inserted, "devices", "'\(device.id)' is listed twice; list each device once")
                    c.devices.append(device)
                }
            }
        }
        c.regions = try layers.bool("regions", default: c.regions)
        c.gateways = try layers.bool("gateways", default: c.gateways)
        c.cleanupWaitS = try layers.double("cleanup_wait_s", default: c.cleanupWaitS)
        try check(c.cleanupWaitS >= 0 && c.cleanupWaitS <= 60, "cleanup_wait_s", "must be between 0 and 60 seconds")
        c.mqtt = try MQTTSettings.load(layers, defaults: c.mqtt)
        c.metricsHost = layers.string("metrics.host", default: c.metricsHost)
        c.metricsPort = try layers.int("metrics.port", default: c.metricsPort)
        try check((0...65535).contains(c.metricsPort), "metrics.port", "must be 0 (off) … 65535")
        c.logLevel = layers.string("log.level", default: c.logLevel)
        return c
    }
}
