import Foundation
import WaymarkCore
import WaymarkMQTT
import WaymarkService

extension EdgeConfig {
    /// Builds the configuration from the layers, checking every value; errors name the key, where
    /// it was set, and the accepted values.
    public static func load(_ layers: ConfigLayers) throws -> EdgeConfig {
        func required(_ key: String) throws -> String {
            guard let v = layers.optionalString(key), !v.isEmpty else {
                throw ConfigLayers.ConfigError(
                    "'\(key)' is required: pass --\(key), set \(ConfigLayers.envName(key, prefix: "WAYMARK_EDGE")) or add it to the config file")
            }
            return v
        }
        func check(_ ok: Bool, _ key: String, _ why: String) throws {
            guard ok else {
                let at = layers.raw(key).map { layers.where_(key, $0.source) } ?? key
                throw ConfigLayers.ConfigError("\(at): \(why)")
            }
        }
        var c = EdgeConfig(sitePath: try required("site"), gateway: try required("gateway"))
        if let s = layers.optionalString("source") { c.source = try parseSource(s) }
        c.topicPrefix = layers.optionalString("topic_prefix")
        c.windowS = try layers.double("window_s", default: c.windowS)
        try check(c.windowS >= 0.1 && c.windowS <= 3600, "window_s", "must be between 0.1 and 3600 seconds")

        c.scanActive = try layers.bool("scan.active", default: c.scanActive)
        c.scanIntervalMS = try layers.double("scan.interval_ms", default: c.scanIntervalMS)
        c.scanWindowMS = try layers.double("scan.window_ms", default: c.scanWindowMS)
        try check((2.5...10240).contains(c.scanIntervalMS), "scan.interval_ms", "must be 2.5 … 10240 ms")
        try check((2.5...10240).contains(c.scanWindowMS) && c.scanWindowMS <= c.scanIntervalMS, "scan.window_ms",
                  "must be 2.5 … 10240 ms and not longer than scan.interval_ms")

        c.replayRate = try layers.double("replay.rate", default: c.replayRate)
        try check(c.replayRate >= 0, "replay.rate", "must be ≥ 0 (0 = as fast as possible, 1 = recorded speed)")
        c.replayEventIntervalMS = try layers.double("replay.event_interval_ms", default: c.replayEventIntervalMS)
        try check(c.replayEventIntervalMS >= 0, "replay.event_interval_ms", "must be ≥ 0")
        c.replayExitWhenDone = try layers.bool("replay.exit_when_done", default: c.replayExitWhenDone)
        if let text = layers.optionalString("replay.start_at") {
            guard let t = Double(text), t.isFinite, t > 0 else {
                throw ConfigLayers.ConfigError("replay.start_at: '\(text)' is not a Unix time in seconds, e.g. 1780304400")
            }
            c.replayStartAt = t
        }

        c.mqtt = try MQTTSettings.load(layers, defaults: c.mqtt)

        c.spoolDir = layers.string("spool.dir", default: c.spoolDir)
        c.spoolMaxBytes = try layers.int("spool.max_bytes", default: c.spoolMaxBytes)
        try check(c.spoolMaxBytes >= 4096, "spool.max_bytes", "must be at least 4096 bytes")
        c.spoolSegmentBatches = try layers.int("spool.segment_batches", default: c.spoolSegmentBatches)
        try check(c.spoolSegmentBatches >= 1, "spool.segment_batches", "must be ≥ 1")
        c.spoolFsync = try layers.bool("spool.fsync", default: c.spoolFsync)
        c.spoolResendAfterS = try layers.double("spool.resend_after_s", default: c.spoolResendAfterS)
        try check(c.spoolResendAfterS >= 0.1, "spool.resend_after_s", "must be ≥ 0.1 seconds")

        if let text = layers.optionalString("publish.encoding") {
            guard let encoding = BatchEncoding(rawValue: text) else {
                let at = layers.raw("publish.encoding").map { layers.where_("publish.encoding", $0.source) } ?? "publish.encoding"
                throw ConfigLayers.ConfigError("\(at): '\(text)' is not a batch encoding: json (the default) or protobuf")
            }
            c.publishEncoding = encoding
        }
        let shards = try layers.int("publish.shards", default: c.publishShards.count)
        guard let layout = ShardLayout(count: shards) else {
            let at = layers.raw("publish.shards").map { layers.where_("publish.shards", $0.source) } ?? "publish.shards"
            throw ConfigLayers.ConfigError("\(at): \(shards) is not a shard count in 1…\(ShardLayout.maxCount) (1 = unsharded; use the count the site's aggregators are configured with)")
        }
        c.publishShards = layout

        c.statusIntervalS = try layers.double("status.interval_s", default: c.statusIntervalS)
        try check(c.statusIntervalS >= 1, "status.interval_s", "must be ≥ 1 second")
        c.metricsHost = layers.string("metrics.host", default: c.metricsHost)
        c.metricsPort = try layers.int("metrics.port", default: c.metricsPort)
        try check((0...65535).contains(c.metricsPort), "metrics.port", "must be 0 (off) … 65535")
        c.logLevel = layers.string("log.level", default: c.logLevel)
        c.pseudonymSecret = layers.optionalString("pseudonym_secret")
        return c
    }

    /// `hci0`, `hci:AA:BB:CC:DD:EE:FF` or `replay:FILE`.
    public static func parseSource(_ text: String) throws -> Source {
        if text.hasPrefix("replay:") {
            let path = String(text.dropFirst(7))
            guard !path.isEmpty else { throw ConfigLayers.ConfigError("source: 'replay:' needs a file, e.g. replay:capture.txt") }
            return .replay(path: path)
        }
        if text.hasPrefix("hci:") {
            let address = String(text.dropFirst(4))
            let parts = address.split(separator: ":")
            guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
                throw ConfigLayers.ConfigError("source: '\(text)' is not hci:AA:BB:CC:DD:EE:FF (the adapter's address, see `hciconfig`)")
            }
            return .adapterAddress(address.uppercased())
        }
        if text.hasPrefix("hci"), Int(text.dropFirst(3)) != nil { return .adapter(text) }
        throw ConfigLayers.ConfigError("source: '\(text)' is not an adapter (hci0), hci:ADDRESS or replay:FILE")
    }
}
