import Foundation
import WaymarkCore
import WaymarkMQTT
import WaymarkService

extension AggregatorConfig {
    /// Builds the configuration from the layers, checking every value; errors name the key,
    /// where it was set, and the accepted values.
    public static func load(_ layers: ConfigLayers) throws -> AggregatorConfig {
        func check(_ ok: Bool, _ key: String, _ why: String) throws {
            guard ok else {
                let at = layers.raw(key).map { layers.where_(key, $0.source) } ?? key
                throw ConfigLayers.ConfigError("\(at): \(why)")
            }
        }
        guard let site = layers.optionalString("site"), !site.isEmpty else {
            throw ConfigLayers.ConfigError("'site' is required: pass --site FILE, set WAYMARK_AGGREGATOR_SITE or add site: to the config file")
        }
        var c = AggregatorConfig(sitePath: site)
        c.topicPrefix = layers.optionalString("topic_prefix")
        c.mqtt = try MQTTSettings.load(layers, defaults: c.mqtt)

        c.databaseURL = layers.string("database.url", default: c.databaseURL)
        c.databasePassword = layers.optionalString("database.password")
        c.flushIntervalMS = try layers.int("database.flush_interval_ms", default: c.flushIntervalMS)
        try check((10...60_000).contains(c.flushIntervalMS), "database.flush_interval_ms", "must be 10 … 60000 ms")
        c.maxPendingRows = try layers.int("database.max_pending_rows", default: c.maxPendingRows)
        try check(c.maxPendingRows >= 1000, "database.max_pending_rows", "must be at least 1000")
        c.retryS = try layers.double("database.retry_s", default: c.retryS)
        try check(c.retryS >= 0.1 && c.retryS <= 300, "database.retry_s", "must be 0.1 … 300 seconds")

        c.maxPayloadBytes = try layers.int("ingest.max_payload_bytes", default: c.maxPayloadBytes)
        try check(c.maxPayloadBytes >= 1024, "ingest.max_payload_bytes", "must be at least 1024 bytes")
        c.ingestQueueMessages = try layers.int("ingest.queue_messages", default: c.ingestQueueMessages)
        try check(c.ingestQueueMessages >= 10, "ingest.queue_messages", "must be at least 10")
        c.decodeThreads = try layers.int("ingest.decode_threads", default: c.decodeThreads)
        try check((0...64).contains(c.decodeThreads), "ingest.decode_threads", "must be 0 (the fusion thread decodes) … 64")
        c.fusionWorkers = try layers.int("fusion.workers", default: c.fusionWorkers)
        try check((1...64).contains(c.fusionWorkers), "fusion.workers", "must be 1 … 64 (fusion engines working side by side)")
        c.shards = try Self.shards(layers)

        c.gapTimeoutS = try layers.double("ingest.gap_timeout_s", default: c.gapTimeoutS)
        try check(c.gapTimeoutS >= 0, "ingest.gap_timeout_s", "must be ≥ 0 seconds")
        c.reorderWindowS = try layers.double("ingest.reorder_window_s", default: c.reorderWindowS)
        try check(c.reorderWindowS >= 0 && c.reorderWindowS <= 600, "ingest.reorder_window_s",
                  "must be between 0 (off) and 600 seconds")
        c.catchUpS = try layers.double("ingest.catch_up_s", default: c.catchUpS)
        try check(c.catchUpS >= 0 && c.catchUpS <= 600, "ingest.catch_up_s", "must be between 0 (off) and 600 seconds")
        c.clock.toleranceS = try layers.double("clock.tolerance_s", default: c.clock.toleranceS)
        try check(c.clock.toleranceS >= 0, "clock.tolerance_s", "must be ≥ 0 seconds")
        c.clock.maxCorrectionS = try layers.double("clock.max_correction_s", default: c.clock.maxCorrectionS)
        try check(c.clock.maxCorrectionS >= 0, "clock.max_correction_s", "must be ≥ 0 seconds (0: never correct)")
        c.clock.maxAgeS = try layers.double("clock.max_age_s", default: c.clock.maxAgeS)
        try check(c.clock.maxAgeS >= 60, "clock.max_age_s", "must be at least 60 seconds")
        c.clock.maxFutureS = try layers.double("clock.max_future_s", default: c.clock.maxFutureS)
        try check(c.clock.maxFutureS >= 0, "clock.max_future_s", "must be ≥ 0 seconds")

        c.rawSightings = try layers.bool("raw_sightings.enabled", default: c.rawSightings)
        c.rawRetentionDays = try layers.int("raw_sightings.retention_days", default: c.rawRetentionDays)
        try check(c.rawRetentionDays >= 1, "raw_sightings.retention_days", "must be at least 1 day")
        c.historyRetentionDays = try layers.int("history.retention_days", default: c.historyRetentionDays)
        try check(c.historyRetentionDays == 0 || c.historyRetentionDays >= 31, "history.retention_days",
                  "must be 0 (keep the history forever) or at least 31 days (history is dropped a whole UTC month at a time)")
        c.reportRefreshIntervalS = try layers.double("reports.refresh_interval_s", default: c.reportRefreshIntervalS)
        try check(c.reportRefreshIntervalS == 0 || (1...86_400).contains(c.reportRefreshIntervalS), "reports.refresh_interval_s",
                  "must be 0 (off) or 1 … 86400 seconds")
        c.publishIntervalMS = try layers.int("publish.interval_ms", default: c.publishIntervalMS)
        try check((10...60_000).contains(c.publishIntervalMS), "publish.interval_ms", "must be 10 … 60000 ms")

        c.webhooks = try WebhookSettings.load(layers, check: check)

        c.metricsHost = layers.string("metrics.host", default: c.metricsHost)
        c.metricsPort = try layers.int("metrics.port", default: c.metricsPort)
        try check((0...65535).contains(c.metricsPort), "metrics.port", "must be 0 (off) … 65535")
        c.logLevel = layers.string("log.level", default: c.logLevel)
        c.rejectLogIntervalS = try layers.double("log.reject_interval_s", default: c.rejectLogIntervalS)
        try check(c.rejectLogIntervalS >= 1, "log.reject_interval_s", "must be at least 1 second")
        return c
    }

    /// `shards.count` (1…`ShardLayout.maxCount`) and `shards.own` (`0,2,5`, ranges `0-7`; every shard when unset).
    static func shards(_ layers: ConfigLayers) throws -> ShardOwnership {
        let at = { (key: String) in layers.raw(key).map { layers.where_(key, $0.source) } ?? key }
        let count = try layers.int("shards.count", default: 1)
        guard let layout = ShardLayout(count: count) else {
            throw ConfigLayers.ConfigError("\(at("shards.count")): \(count) is not a shard count in 1…\(ShardLayout.maxCount) (1 = unsharded; the gateways' publish.shards must be the same)")
        }
        guard let text = layers.optionalString("shards.own"), !text.trimmingCharacters(in: .whitespaces).isEmpty else {
            return .all(layout)
        }
        var owned: [Int] = []
        for item in text.split(separator: ",") {
            let part = item.trimmingCharacters(in: .whitespaces)
            let bounds = part.split(separator: "-", maxSplits: 1).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            switch (bounds.count, bounds.first ?? nil, bounds.last ?? nil) {
            case (1, let a?, _): owned.append(a)
            case (2, let a?, let b?) where a <= b: owned += Array(a...b)
            default:
                throw ConfigLayers.ConfigError("\(at("shards.own")): '\(part)' is not a shard number or a range such as 0-3 (the list is e.g. [0, 1] or \"0-3,8\")")
            }
        }
        switch ShardOwnership.make(layout: layout, owned: owned) {
        case .success(let o): return o
        case .failure(let e): throw ConfigLayers.ConfigError("\(at("shards.own")): \(e) (shards.count is \(count))")
        }
    }
}
