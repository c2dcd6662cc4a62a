import Prometheus

/// The agent's Prometheus metrics (names `waymark_edge_*`), fed from the plain counters on each tick.
///
/// Counters are advanced by the difference to the previous snapshot, so the pipeline's hot path
/// only bumps integers and never touches the registry.
final class EdgeMetrics {
    let registry: PrometheusCollectorRegistry
    private let adverts, decoded, tracked, batches, published, publishErrors, reconnects, resent, resendRequested, acked, dropped,
                damaged, malformedLines, otherGateway, spoolErrors: Counter
    private var malformedEvents: [String: Counter] = [:]
    private var filtered: [AdvertFilter.DropReason: Counter] = [:]
    private let spoolDepth, spoolBytes, connected, scanning: Gauge
    private var last = Snapshot()

    /// Everything the metrics show, copied under the agent's lock.
    struct Snapshot {
        var pipeline = EdgeCounters()
        var runtime = EdgeRuntimeCounters()
        var spoolDepth = 0
        var spoolBytes = 0
        var spoolDropped = 0
        var spoolDamaged = 0
        var connected = false
        var scanning = false
    }

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
        func counter(_ name: String, _ help: String) -> Counter {
            registry.makeCounter(descriptor: Self.name(String(name.dropLast(6)), unit: "total", help))
        }
        adverts = counter("adverts_total", "Advertising reports (or replayed sightings) received")
        decoded = counter("decoded_total", "Reports decoded from well-formed HCI events")
        tracked = counter("tracked_total", "Reports of tracked devices counted into a window")
        batches = counter("batches_total", "Batches produced (one per window with sightings)")
        published = counter("published_total", "Batch publishes acknowledged by the broker (PUBACK), including resends")
        publishErrors = counter("publish_errors_total", "Publishes that failed (not connected, queue full, …); the batch stays spooled")
        reconnects = counter("reconnects_total", "Connections to the broker after the first one")
        resent = counter("resent_total", "Batches sent again (no aggregator ack in time, or after a restart)")
        resendRequested = counter("resend_requested_total", "Spooled batches the aggregator asked for again (it parks later ones behind a gap)")
        acked = counter("acked_total", "Batches removed from the spool by an aggregator ack")
        dropped = counter("spool_dropped_total", "Unacknowledged batches dropped because the spool was full")
        damaged = counter("spool_damaged_total", "Damaged spool stretches (torn writes) skipped at start")
        malformedLines = counter("replay_malformed_lines_total", "Replay lines that could not be parsed")
        otherGateway = counter("replay_other_gateway_total", "Replayed sightings of other gateways (skipped)")
        spoolErrors = counter("spool_errors_total", "Spool writes that failed (the batch was published without a durable copy)")
        for reason in AdvertFilter.DropReason.allCases {
            filtered[reason] = registry.makeCounter(descriptor: Self.name("filtered", unit: "total", "Reports dropped by the tracking rules"),
                                                    labels: [("reason", reason.rawValue)])
        }
        spoolDepth = registry.makeGauge(descriptor: Self.name("spool_depth", unit: "", "Batches in the spool awaiting an aggregator ack"))
        spoolBytes = registry.makeGauge(descriptor: Self.name("spool_bytes", unit: "", "Bytes of spool segments on disk"))
        connected = registry.makeGauge(descriptor: Self.name("mqtt_connected", unit: "", "1 while connected to the broker"))
        scanning = registry.makeGauge(descriptor: Self.name("scanning", unit: "", "1 while the source delivers adverts"))
    }

    static func name(_ metric: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "waymark", subsystem: "edge", metricName: metric, unitName: unit, helpText: help)
    }

    func update(_ now: Snapshot) {
        func advance(_ c: Counter, _ new: Int, _ old: Int) { if new > old { c.increment(by: Int64(new - old)) } }
        let p = now.pipeline, o = last.pipeline
        advance(adverts, p.adverts, o.adverts)
        advance(decoded, p.decoded, o.decoded)
        advance(tracked, p.tracked, o.tracked)
        advance(batches, p.batches, o.batches)
        advance(malformedLines, p.malformedLines, o.malformedLines)
        advance(otherGateway, p.otherGateway, o.otherGateway)
        for (code, n) in p.malformedEvents {
            let c = malformedEvents[code] ?? registry.makeCounter(
                descriptor: Self.name("malformed_events", unit: "total", "Malformed HCI events skipped, by cause"), labels: [("cause", code)])
            malformedEvents[code] = c
            advance(c, n, o.malformedEvents[code] ?? 0)
        }
        for (reason, n) in p.filtered { advance(filtered[reason]!, n, o.filtered[reason] ?? 0) }
        let r = now.runtime, ro = last.runtime
        advance(published, r.published, ro.published)
        advance(publishErrors, r.publishErrors, ro.publishErrors)
        advance(reconnects, r.reconnects, ro.reconnects)
        advance(resent, r.resent, ro.resent)
        advance(resendRequested, r.resendRequested, ro.resendRequested)
        advance(acked, r.acked, ro.acked)
        advance(spoolErrors, r.spoolErrors, ro.spoolErrors)
        advance(dropped, now.spoolDropped, last.spoolDropped)
        advance(damaged, now.spoolDamaged, last.spoolDamaged)
        spoolDepth.set(Int64(now.spoolDepth))
        spoolBytes.set(Int64(now.spoolBytes))
        connected.set(Int64(now.connected ? 1 : 0))
        scanning.set(Int64(now.scanning ? 1 : 0))
        last = now
    }
}

/// Counters of the agent's I/O side (MQTT and spool), next to the pipeline's ``EdgeCounters``.
public struct EdgeRuntimeCounters: Sendable, Equatable {
    public var published = 0
    public var publishErrors = 0
    public var reconnects = 0
    public var resent = 0
    /// Batches marked due by the aggregator's resend requests (sent again, so also in `resent`).
    public var resendRequested = 0
    public var acked = 0
    public var spoolErrors = 0
    public var invalidAcks = 0
    public init() {}
}
