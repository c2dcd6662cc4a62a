import Prometheus

/// The aggregator's Prometheus metrics (`waymark_aggregator_*`), served by `MetricsEndpoint`.
final class AggregatorMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let batches: Counter
    let sightings: Counter
    let duplicates: Counter
    let statuses: Counter
    let rejected: [RejectReason: Counter]
    let acks: Counter
    let commits: Counter
    let dbErrors: Counter
    let ambiguousCommits: Counter
    let published: Counter
    let publishFailures: Counter
    let fusionLag: Gauge
    let writeQueueRows: Gauge
    let ingestQueue: Gauge
    let devices: Gauge
    let devicesForgotten: Counter
    /// 1 per shard this aggregator owns (`shard` label), so that `count by (shard)` over all
    /// aggregators shows a shard with no owner or two; and other runs found owning one of them.
    let shardOwned: [Gauge]
    let shardConflicts: Counter
    let dbUp: Gauge
    let heldBatches: Gauge
    let lateBatches: Counter
    let parkedBatches: Gauge
    let resendRequests: Counter
    let catchUpTimeouts: Counter
    let calibrationPower: Gauge
    let calibrationExponent: Gauge
    let calibrationRoomLoss: Gauge
    let calibrationGatewayOffset: [String: Gauge]
    /// The learned reception sensitivity at a few expected readings (dBm → gauge), and each
    /// gateway's learned reliability.
    let calibrationReception: [(dBm: Double, gauge: Gauge)]
    let calibrationGatewayReliability: [String: Gauge]
    /// Notifications (docs/notifications.md).
    let notificationsStored: Counter
    let notificationsSuppressed: [String: Counter]
    let notificationsPublished: Counter
    let notificationsUnconfirmed: Gauge
    let notificationInboxDropped: Counter
    /// Report rollup refreshes (`reports.refresh_interval_s`).
    let rollupRefreshes: Counter
    let rollupRefreshFailures: Counter
    let rollupHoursRebuilt: Counter
    let rollupRefreshSeconds: Gauge
    /// Partition upkeep (schema 0004, 0011) and history retention (`history.retention_days`).
    let partitionUpkeepFailures: Counter
    let historyPartitionsCreated: Counter
    let historyPartitionsDropped: Counter
    let historyJourneysDropped: Counter
    let webhookAttempts: [String: Counter]
    let webhookDropped: Counter
    let webhookQueue: Gauge
    let commitRows: ValueHistogram
    let commitSeconds: DurationHistogram
    /// Wall-clock time from a live-region change's evidence to its device state's publication.
    let liveRegionDelay: ValueHistogram

    /// Upper bounds (s) of `liveRegionDelay`'s buckets: fine around the 1–3 s a live change takes
    /// (the edge's window, the next second's evidence, the state's publication interval).
    static let liveRegionDelayBuckets: [Double] = [0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 2.75, 3, 3.5, 4, 5, 7.5, 10, 30]

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), gateways: [String] = [], shards: [Int] = [0]) {
        self.registry = registry
        func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
            MetricNameDescriptor(namespace: "waymark", subsystem: "aggregator", metricName: metric, unitName: unit, helpText: help)
        }
        batches = registry.makeCounter(descriptor: name("batches", "total", "Sighting batches accepted."))
        sightings = registry.makeCounter(descriptor: name("sightings", "total", "Sighting entries ingested (in accepted batches)."))
        duplicates = registry.makeCounter(descriptor: name("duplicates", "total", "Batches dropped as already processed (gateway, boot, seq)."))
        statuses = registry.makeCounter(descriptor: name("status_messages", "total", "Gateway status messages handled."))
        var r: [RejectReason: Counter] = [:]
        for reason in RejectReason.allCases where reason != .duplicate {
            r[reason] = registry.makeCounter(descriptor: name("rejected", "total", "Payloads rejected, by reason."),
                                             labels: [("reason", reason.rawValue)])
        }
        rejected = r
        acks = registry.makeCounter(descriptor: name("acks", "total", "Acks published to gateways after a commit."))
        commits = registry.makeCounter(descriptor: name("db_commits", "total", "Write transactions committed."))
        dbErrors = registry.makeCounter(descriptor: name("db_errors", "total", "Failed write attempts: retried (database unavailable), rewritten message by message (data refused), or fatal."))
        ambiguousCommits = registry.makeCounter(descriptor: name("db_ambiguous_commits", "total",
            "Writes whose COMMIT reply was lost but which had committed (found by reading back the write number; not written again)."))
        published = registry.makeCounter(descriptor: name("published", "total", "Device state, monitored set and event messages published."))
        publishFailures = registry.makeCounter(descriptor: name("publish_failures", "total", "Publications the MQTT client refused."))
        fusionLag = registry.makeGauge(descriptor: name("fusion_lag", "seconds", "Receive time minus evidence time of the latest batch."))
        writeQueueRows = registry.makeGauge(descriptor: name("write_queue", "rows", "Rows waiting to be written to PostgreSQL."))
        ingestQueue = registry.makeGauge(descriptor: name("ingest_queue", "messages", "MQTT messages waiting for the fusion thread."))
        devices = registry.makeGauge(descriptor: name("devices", "count", "Devices the fusion engine holds state for."))
        devicesForgotten = registry.makeCounter(descriptor: name("devices_forgotten", "total",
            "Idle devices the fusion engine forgot after fusion.forget_after_s without a sighting."))
        dbUp = registry.makeGauge(descriptor: name("db", "up", "1 while the last write succeeded, 0 while PostgreSQL is failing."))
        shardOwned = shards.map { k in
            registry.makeGauge(descriptor: name("shard_owned", "", "1 for each shard this aggregator owns (shards.own; shard 0 of 1 unsharded)."),
                               labels: [("shard", String(k))])
        }
        shardConflicts = registry.makeCounter(descriptor: name("shard_conflicts", "total",
            "Other running aggregators found owning a shard this one owns (each logged once): their devices are fused twice."))
        heldBatches = registry.makeGauge(descriptor: name("reorder_held", "batches", "Batches held for event-time ordering."))
        lateBatches = registry.makeCounter(descriptor: name("late_batches", "total", "Batches that arrived behind the event-time watermark (fused late)."))
        parkedBatches = registry.makeGauge(descriptor: name("parked", "batches",
            "Batches parked behind a gap in their gateway's sequence until the missing ones are resent."))
        resendRequests = registry.makeCounter(descriptor: name("resend_requests", "total",
            "Resend requests published to gateways for batches missing before parked ones."))
        catchUpTimeouts = registry.makeCounter(descriptor: name("catch_up_timeouts", "total",
            "Times the engine's clock stopped waiting for a gateway to catch up (ingest.catch_up_s passed) for the batches missing in a gap."))
        calibrationPower = registry.makeGauge(descriptor: name("calibration_measured_power", "db",
            "Self-calibration: dB the engine adds to every device's measured power."))
        calibrationExponent = registry.makeGauge(descriptor: name("calibration_path_loss_exponent", "ratio",
            "Self-calibration: the venue's learned path-loss exponent."))
        calibrationRoomLoss = registry.makeGauge(descriptor: name("calibration_room_loss", "db",
            "Self-calibration: the learned loss through a wall between two rooms."))
        calibrationReception = [-95.0, -90.0, -85.0, -80.0, -70.0].map { dBm in
            (dBm, registry.makeGauge(descriptor: name("calibration_reception_sensitivity", "ratio",
                "Self-calibration: the share of a reliable gateway's reports of a device that arrive when the model expects this RSSI there (decides what a silent gateway says)."),
                labels: [("expected_dbm", String(Int(dBm)))]))
        }
        var reliabilities: [String: Gauge] = [:]
        for g in gateways {
            reliabilities[g] = registry.makeGauge(descriptor: name("calibration_gateway_reliability", "ratio",
                "Self-calibration: the share of a device's seconds this gateway reports when the signal is strong (in seconds in which another gateway did); a low value points at its scanner or radio."),
                labels: [("gateway", g)])
        }
        calibrationGatewayReliability = reliabilities
        var offsets: [String: Gauge] = [:]
        for g in gateways {
            offsets[g] = registry.makeGauge(descriptor: name("calibration_gateway_deviation", "db",
                "Self-calibration: how much hotter (+) or colder than the model this gateway reads, relative to the others; beyond ±3 dB the engine corrects it."),
                labels: [("gateway", g)])
        }
        calibrationGatewayOffset = offsets
        notificationsStored = registry.makeCounter(descriptor: name("notifications", "total",
            "Notifications the site's rules sent, counted when stored (committed)."))
        var suppressed: [String: Counter] = [:]
        for reason in ["cooldown", "quiet_hours"] {
            suppressed[reason] = registry.makeCounter(descriptor: name("notifications_suppressed", "total",
                "Notifications a rule held back: within its cool-down for the device, or in its quiet hours."), labels: [("reason", reason)])
        }
        notificationsSuppressed = suppressed
        notificationsPublished = registry.makeCounter(descriptor: name("notifications_published", "total",
            "Notifications published on MQTT (both topics), including those published again after a restart."))
        notificationsUnconfirmed = registry.makeGauge(descriptor: name("notifications_unconfirmed", "count",
            "Notifications stored but not yet confirmed by the broker (PUBACK)."))
        notificationInboxDropped = registry.makeCounter(descriptor: name("notification_inbox_dropped", "total",
            "Stored notifications not handed to delivery because it was 100,000 behind (delivered at the next start)."))
        rollupRefreshes = registry.makeCounter(descriptor: name("report_refreshes", "total", "Report rollup refreshes run by the aggregator (reports.refresh_interval_s)."))
        rollupRefreshFailures = registry.makeCounter(descriptor: name("report_refresh_failures", "total", "Report rollup refreshes that failed (retried at the next interval)."))
        partitionUpkeepFailures = registry.makeCounter(descriptor: name("partition_upkeep_failures", "total",
            "Partition upkeeps (raw sighting days, history months and their retention) that failed (retried later)."))
        historyPartitionsCreated = registry.makeCounter(descriptor: name("history_partitions_created", "total",
            "Monthly partitions of region_events, visits and transitions created."))
        historyPartitionsDropped = registry.makeCounter(descriptor: name("history_partitions_dropped", "total",
            "Monthly history partitions dropped by retention (history.retention_days)."))
        historyJourneysDropped = registry.makeCounter(descriptor: name("history_journeys_dropped", "total",
            "Journeys deleted by retention (ended before the kept months)."))
        rollupHoursRebuilt = registry.makeCounter(descriptor: name("report_refresh_hours", "total", "Hours of report rollups rebuilt by the aggregator's refreshes."))
        rollupRefreshSeconds = registry.makeGauge(descriptor: name("report_refresh_duration", "seconds", "Duration of the last report rollup refresh."))
        var attempts: [String: Counter] = [:]
        for outcome in ["delivered", "retry", "failed"] {
            attempts[outcome] = registry.makeCounter(descriptor: name("webhook_attempts", "total",
                "Webhook POSTs by outcome: delivered (2xx), retry (will be tried again), failed (given up)."), labels: [("outcome", outcome)])
        }
        webhookAttempts = attempts
        webhookDropped = registry.makeCounter(descriptor: name("webhook_dropped", "total",
            "Webhook deliveries dropped from the full queue (webhooks.queue_size); their rows say dropped."))
        webhookQueue = registry.makeGauge(descriptor: name("webhook_queue", "jobs", "Webhook deliveries waiting or retrying."))
        commitRows = registry.makeValueHistogram(descriptor: name("db_batch", "rows", "Rows per write transaction."),
                                                 buckets: [10, 100, 1_000, 10_000, 100_000, 1_000_000])
        liveRegionDelay = registry.makeValueHistogram(
            descriptor: name("live_region_delay", "seconds",
                             "Wall-clock time from the end of the second of evidence that changed a device's live region to the publication of its state (gateway clocks taken as right)."),
            buckets: Self.liveRegionDelayBuckets)
        commitSeconds = registry.makeDurationHistogram(
            descriptor: name("db_commit", "seconds", "Duration of a write transaction."),
            buckets: [.milliseconds(5), .milliseconds(20), .milliseconds(100), .milliseconds(500), .seconds(2), .seconds(10)])
    }
}
