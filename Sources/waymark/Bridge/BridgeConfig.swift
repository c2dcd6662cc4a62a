import WaymarkCore
import WaymarkMQTT
import WaymarkService

/// `waymark bridge`'s settings: every key, its default and its meaning (documented for operators in
/// deploy/bridge.example.yaml and docs/foreign-gateways.md). Loaded from flags >
/// `WAYMARK_BRIDGE_<KEY>` > YAML file > these defaults.
struct BridgeConfig: Sendable {
    /// `site`: the site file, whose `foreign_gateways:` section maps receivers to gateways.
    var sitePath: String
    /// `topic_prefix`: default `waymark/v1/<site id>`.
    var topicPrefix: String?
    /// `window_s`: the window of each batch (as `waymark-edge`'s `window_s`).
    var windowS = 1.0
    /// `status.interval_s`: each gateway's status is re-published this often (its heartbeat).
    var statusIntervalS = 10.0
    /// `receiver_silence_s`: a receiver without a status of its own counts as offline after this long
    /// without a message.
    var receiverSilenceS = 60.0
    /// `publish.shards`: the site's shard count when several aggregators share its devices (as
    /// `waymark-edge`'s `publish.shards`; docs/scaling.md §1). 1 (the default) is unsharded.
    var shards = ShardLayout.single
    /// `espresense.prefix`: the ESPresense topic prefix (`espresense` in its firmware).
    var espresensePrefix = "espresense"
    /// `mqtt.*`; `mqtt.client_id` defaults to `waymark-bridge-<site>`, and each gateway's publishing
    /// connection uses `<client id>-<gateway>`.
    var mqtt = MQTTSettings()
    /// `metrics.host`, `metrics.port` (0 = off).
    var metricsHost = "127.0.0.1"
    var metricsPort = 9468
    /// `log.level`: device ids appear only at debug/trace.
    var logLevel = "info"
    /// `pseudonym_secret` (secret): overrides the site file's `tracking.pseudonym_secret`.
    var pseudonymSecret: String?

    static let keys = [
        "site", "topic_prefix", "window_s", "status.interval_s", "receiver_silence_s", "espresense.prefix", "publish.shards",
        "metrics.host", "metrics.port", "log.level", "pseudonym_secret",
    ] + MQTTSettings.keys
    static let secretKeys = MQTTSettings.secretKeys.union(["pseudonym_secret"])

    /// Reads every key, checking each value; errors name the key, where it was set and what is accepted.
    static func load(_ layers: ConfigLayers) throws -> BridgeConfig {
        func check(_ ok: Bool, _ key: String, _ why: String) throws {
            guard ok else {
                let at = layers.raw(key).map { layers.where_(key, $0.source) } ?? key
                throw ConfigLayers.ConfigError("\(at): \(why)")
            }
        }
        guard let site = layers.optionalString("site"), !site.isEmpty else {
            throw ConfigLayers.ConfigError("'site' is required: pass --site, set WAYMARK_BRIDGE_SITE or add `site:` to the config file")
        }
        var c = BridgeConfig(sitePath: site)
        c.topicPrefix = layers.optionalString("topic_prefix")
        c.windowS = try layers.double("window_s", default: c.windowS)
        try check(c.windowS >= 0.1 && c.windowS <= 60, "window_s", "must be between 0.1 and 60 seconds")
        c.statusIntervalS = try layers.double("status.interval_s", default: c.statusIntervalS)
        try check(c.statusIntervalS >= 0.5 && c.statusIntervalS <= 300, "status.interval_s",
                  "must be between 0.5 and 300 seconds (keep it well below the site's fusion.gateway_silence_s)")
        c.receiverSilenceS = try layers.double("receiver_silence_s", default: c.receiverSilenceS)
        try check(c.receiverSilenceS >= 1, "receiver_silence_s", "must be at least 1 second")
        let shards = try layers.int("publish.shards", default: 1)
        guard let layout = ShardLayout(count: shards) else {
            try check(false, "publish.shards", "\(shards) is not a shard count in 1…\(ShardLayout.maxCount) (the aggregators' shards.count; 1 = unsharded)")
            return c
        }
        c.shards = layout
        c.espresensePrefix = layers.string("espresense.prefix", default: c.espresensePrefix)
        try check(!c.espresensePrefix.isEmpty && !c.espresensePrefix.contains(where: { $0 == "+" || $0 == "#" }) && !c.espresensePrefix.hasSuffix("/"),
                  "espresense.prefix", "must be a topic without wildcards or a trailing '/', e.g. espresense")
        c.mqtt = try MQTTSettings.load(layers, defaults: c.mqtt)
        c.metricsHost = layers.string("metrics.host", default: c.metricsHost)
        c.metricsPort = try layers.int("metrics.port", default: c.metricsPort)
        try check((0...65535).contains(c.metricsPort), "metrics.port", "must be 0 (off) … 65535")
        c.logLevel = layers.string("log.level", default: c.logLevel)
        c.pseudonymSecret = layers.optionalString("pseudonym_secret")
        return c
    }
}
