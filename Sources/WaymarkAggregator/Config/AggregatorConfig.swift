import Foundation
import WaymarkMQTT
import WaymarkService

/// The aggregator's configuration: every key, its default and its meaning. Loaded from flags >
/// environment (`WAYMARK_AGGREGATOR_<KEY>`, dots as underscores) > YAML file > these defaults by
/// `load(_:)`; documented for operators in deploy/aggregator.example.yaml and docs/aggregator.md.
public struct AggregatorConfig: Sendable {
    /// `site`: path of the site file (required).
    public var sitePath: String
    /// `topic_prefix`: default `waymark/v1/<site id>`.
    public var topicPrefix: String?

    /// The `mqtt.*` keys (url, client_id — default `waymark-aggregator-<site>`, stable because the
    /// session is persistent —, credentials, TLS, keepalive, max_inflight: outgoing QoS 1 messages in
    /// flight, default 100; reconnect backoff). libmosquitto walks the messages in flight on every
    /// PUBACK and every publish, so a larger window costs CPU: in `waymark-bench aggregator` its
    /// network thread used 1.9–2.5 s per million sightings at 1000 against 1.4–1.5 s at 100.
    public var mqtt: MQTTSettings = {
        var m = MQTTSettings()
        m.maxInflight = 100
        return m
    }()

    /// `database.url`: `postgresql://user@host:5432/db`; empty = libpq environment (PGHOST …).
    public var databaseURL = ""
    /// `database.password` (secret): used when the URL has none (else PGPASSWORD or ~/.pgpass).
    public var databasePassword: String?
    /// `database.flush_interval_ms`: how often accumulated rows are committed (and acks sent).
    public var flushIntervalMS = 1000
    /// `database.max_pending_rows`: rows held while PostgreSQL is slow or down; when exceeded,
    /// ingest pauses (the broker and the gateways' spools hold the rest).
    public var maxPendingRows = 2_000_000
    /// `database.retry_s`: pause between attempts while PostgreSQL is unreachable.
    public var retryS = 2.0

    /// `ingest.max_payload_bytes`: larger payloads are rejected as oversize.
    public var maxPayloadBytes = 1 << 20
    /// `ingest.queue_messages`: MQTT messages buffered before the broker connection is slowed.
    public var ingestQueueMessages = 20_000
    /// `ingest.decode_threads`: threads that decode sighting batches while they wait for the fusion
    /// thread (`DecodeStage`); 0 = the fusion thread decodes. Default: one fewer than the cores.
    public var decodeThreads = AggregatorConfig.defaultDecodeThreads

    /// One thread per core besides the fusion thread's, at most 8 (`ingest.decode_threads`).
    public static var defaultDecodeThreads: Int { max(0, min(8, ProcessInfo.processInfo.activeProcessorCount - 1)) }

    /// `fusion.workers`: fusion engines working side by side, each device fused by the one a fixed
    /// hash of its id names (`FusionWorkers`). Default: one per core, at most 8. The results depend
    /// on the count (each worker calibrates itself from its own devices); `waymark replay --workers N`
    /// reproduces an aggregator running N. Changing it restarts each worker's calibration from the
    /// saved ones and moves devices between workers with their state.
    public var fusionWorkers = AggregatorConfig.defaultFusionWorkers

    /// `shards.count` and `shards.own`: the site's shard layout (the gateways' `publish.shards`)
    /// and the shards this aggregator owns (a list such as `[0, 1]`, or `0-7`; default every one),
    /// for several aggregators sharing one site's devices (docs/scaling.md §1). Default unsharded.
    public var shards = ShardOwnership.all(.single)

    /// One per core, at most 8 (`fusion.workers`).
    public static var defaultFusionWorkers: Int { max(1, min(8, ProcessInfo.processInfo.activeProcessorCount)) }

    /// `ingest.gap_timeout_s`: how long a gap in a gateway's batch sequence is waited for (the
    /// gateway resends from the gap) before later batches are taken and the gap counts as lost.
    public var gapTimeoutS = 60.0
    /// `ingest.reorder_window_s`: batches are held up to this long (receive clock) and fused in
    /// order of window time once every active gateway (online, within this many seconds of the most
    /// recent one in evidence time) has sent evidence that recent; 0 = fuse in arrival order. See
    /// `ReorderBuffer`.
    public var reorderWindowS = 2.0
    /// `ingest.catch_up_s`: after a gap in a gateway's sequence (batches lost with a broker or
    /// aggregator crash, asked for again), the engine's clock waits up to this long for the missing
    /// batches, so that they are fused in window order and not late. 0 turns the wait off.
    public var catchUpS = 15.0

    /// `clock.tolerance_s`, `clock.max_correction_s`, `clock.max_age_s`, `clock.max_future_s`: see `ClockSanity`.
    public var clock = ClockSanity.Parameters()

    /// `raw_sightings.enabled`: also store every sighting entry (table `sightings`).
    public var rawSightings = false
    /// `raw_sightings.retention_days`: daily partitions older than this are dropped.
    public var rawRetentionDays = 30

    /// `history.retention_days`: region events, visits and transitions (monthly partitions, schema
    /// 0011) of the UTC months wholly before this many days ago are dropped, with the journeys that
    /// ended before them; 0 (the default) keeps them forever. Applies to the whole database.
    public var historyRetentionDays = 0

    /// `reports.refresh_interval_s`: how often the aggregator brings the report rollups up to date
    /// (`waymark_report_refresh` on a connection of its own, never in the way of ingest), so that
    /// reports read on a streaming replica, where nothing can refresh them, are at most this old;
    /// 0 leaves refreshing to `waymark report` and to the operator.
    public var reportRefreshIntervalS = 300.0

    /// `publish.interval_ms`: device state and monitored sets are published at most this often per
    /// device, except a state whose live region changed, which goes out at once.
    public var publishIntervalMS = 1000

    /// `webhooks.*`: delivery of notifications to the rules' webhooks (docs/notifications.md).
    public var webhooks = WebhookSettings()

    /// `metrics.host`, `metrics.port` (0 = off).
    public var metricsHost = "127.0.0.1"
    public var metricsPort = 9466
    /// `log.level`; `log.reject_interval_s`: each rejection reason is logged at most once per interval.
    public var logLevel = "info"
    public var rejectLogIntervalS = 60.0

    public init(sitePath: String) { self.sitePath = sitePath }

    /// Every key, for `ConfigLayers`.
    public static let keys = [
        "site", "topic_prefix",
    ] + MQTTSettings.keys + [
        "database.url", "database.password", "database.flush_interval_ms", "database.max_pending_rows", "database.retry_s",
        "ingest.max_payload_bytes", "ingest.queue_messages", "ingest.decode_threads", "fusion.workers", "shards.count", "shards.own", "ingest.gap_timeout_s", "ingest.reorder_window_s", "ingest.catch_up_s",
        "clock.tolerance_s", "clock.max_correction_s", "clock.max_age_s", "clock.max_future_s",
        "raw_sightings.enabled", "raw_sightings.retention_days", "history.retention_days",
        "reports.refresh_interval_s",
        "publish.interval_ms",
    ] + WebhookSettings.keys + [
        "metrics.host", "metrics.port", "log.level", "log.reject_interval_s",
    ]
    /// Keys never printed.
    public static let secretKeys: Set<String> = MQTTSettings.secretKeys.union(["database.password", "webhooks.secret"])

    /// The MQTT connection (credentials and TLS applied).
    public func connection() throws(MQTTError) -> MQTTConnection { try mqtt.connection() }

    /// The database connection string with `database.password` added when set.
    public var databaseConnectionString: String {
        guard let databasePassword, !databasePassword.isEmpty else { return databaseURL }
        if databaseURL.isEmpty { return "password='\(databasePassword.replacingOccurrences(of: "'", with: "\\'"))'" }
        if databaseURL.contains("://") {
            let encoded = databasePassword.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? databasePassword
            return databaseURL + (databaseURL.contains("?") ? "&" : "?") + "password=" + encoded
        }
        return databaseURL + " password='\(databasePassword.replacingOccurrences(of: "'", with: "\\'"))'"
    }
}
