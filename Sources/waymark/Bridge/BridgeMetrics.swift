import Prometheus
import WaymarkBridge

/// `waymark bridge`'s Prometheus metrics (`waymark_bridge_*`), advanced from the engine's plain
/// counters once a second, so the message path only bumps integers.
final class BridgeMetrics {
    struct Snapshot {
        var counters = BridgeCounters()
        var published = 0
        var unsent = 0
        var publishFailures = 0
        var inboxDropped = 0
        var connected = false
        var online = 0
    }

    let registry: PrometheusCollectorRegistry
    private var messages: [String: Counter] = [:]
    private var rejected: [String: Counter] = [:]
    private var filtered: [String: Counter] = [:]
    private let statusMessages, implausibleTx, late, readings, batches, published, unsent, publishFailures, boots, inboxDropped: Counter
    private let connected, online, gateways: Gauge
    private var last = Snapshot()

    init(registry: PrometheusCollectorRegistry, gateways names: [String]) {
        self.registry = registry
        func counter(_ name: String, _ help: String, _ labels: [(String, String)] = []) -> Counter {
            registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "waymark", subsystem: "bridge", metricName: name,
                                                                  unitName: "total", helpText: help), labels: labels)
        }
        func gauge(_ name: String, _ help: String) -> Gauge {
            registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "waymark", subsystem: "bridge", metricName: name, unitName: "", helpText: help))
        }
        for format in ForeignReport.Format.allCases {
            messages[format.rawValue] = counter("messages", "Reading messages received, by receiver format", [("source", format.rawValue)])
        }
        for reason in ForeignRejection.allCases {
            rejected[reason.rawValue] = counter("rejected", "Messages rejected, by reason (malformed, oversize, implausible_rssi, retained, unmapped)",
                                                [("reason", reason.rawValue)])
        }
        for reason in ForeignIdentityMapper.DropReason.allCases {
            filtered[reason.rawValue] = counter("filtered", "Readings dropped by the site's tracking rules", [("reason", reason.rawValue)])
        }
        statusMessages = counter("status_messages", "Receivers' own online/offline messages")
        implausibleTx = counter("implausible_tx", "Readings whose measured power was outside -100…+20 dBm (ignored; the reading kept)")
        late = counter("late_readings", "Readings stamped before their receiver's open window (the clock stepped back)")
        readings = counter("readings", "Readings of tracked devices counted into a window")
        batches = counter("batches", "Batches produced (one per gateway and window with readings)")
        published = counter("published", "Batches handed to the broker")
        unsent = counter("unsent_batches", "Batches dropped because they could not be handed to the broker (at most once: no spool)")
        publishFailures = counter("publish_failures", "Publish calls that failed")
        boots = counter("boots_restarted", "New boots after a reconnect or an unsent batch (keeps sequences gap-free)")
        inboxDropped = counter("inbox_dropped", "Messages dropped because processing fell 50,000 messages behind")
        connected = gauge("mqtt_connected", "1 while the reading connection is up")
        online = gauge("gateways_online", "Bridged gateways whose status is online")
        gateways = gauge("gateways", "Bridged gateways (foreign_gateways entries)")
        gateways.set(Int64(names.count))
    }

    func update(_ now: Snapshot) {
        func advance(_ c: Counter?, _ new: Int, _ old: Int) { if let c, new > old { c.increment(by: Int64(new - old)) } }
        let n = now.counters, o = last.counters
        for (k, v) in n.messages { advance(messages[k], v, o.messages[k] ?? 0) }
        for (k, v) in n.rejected { advance(rejected[k], v, o.rejected[k] ?? 0) }
        for (k, v) in n.filtered { advance(filtered[k], v, o.filtered[k] ?? 0) }
        advance(statusMessages, n.statusMessages, o.statusMessages)
        advance(implausibleTx, n.implausibleTx, o.implausibleTx)
        advance(late, n.lateReadings, o.lateReadings)
        advance(readings, n.readings, o.readings)
        advance(batches, n.batches, o.batches)
        advance(boots, n.bootsRestarted, o.bootsRestarted)
        advance(published, now.published, last.published)
        advance(unsent, now.unsent, last.unsent)
        advance(publishFailures, now.publishFailures, last.publishFailures)
        advance(inboxDropped, now.inboxDropped, last.inboxDropped)
        connected.set(Int64(now.connected ? 1 : 0))
        online.set(Int64(now.online))
        last = now
    }
}
