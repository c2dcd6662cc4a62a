import Prometheus

/// `waymark homeassistant`'s Prometheus metrics (`waymark_homeassistant_*`).
final class HomeAssistantMetrics {
    struct Snapshot {
        var published = 0, failures = 0, removed = 0, statesRead = 0, malformed = 0
        var connected = false
    }

    private let published, failures, removed, statesRead, malformed: Counter
    private let connected: Gauge
    private var last = Snapshot()

    init(registry: PrometheusCollectorRegistry) {
        func counter(_ name: String, _ help: String) -> Counter {
            registry.makeCounter(descriptor: MetricNameDescriptor(namespace: "waymark", subsystem: "homeassistant", metricName: name,
                                                                  unitName: "total", helpText: help))
        }
        published = counter("published", "Messages published (configurations, states, occupancy, removals)")
        failures = counter("publish_failures", "Publish calls that failed")
        removed = counter("removed", "Empty retained messages sent to remove entities and states no longer configured")
        statesRead = counter("device_states", "Aggregator device states read")
        malformed = counter("malformed_states", "Device states that were not the aggregator's JSON (ignored)")
        connected = registry.makeGauge(descriptor: MetricNameDescriptor(namespace: "waymark", subsystem: "homeassistant",
                                                                        metricName: "mqtt_connected", unitName: "",
                                                                        helpText: "1 while connected to the broker"))
    }

    func update(_ now: Snapshot) {
        func advance(_ c: Counter, _ new: Int, _ old: Int) { if new > old { c.increment(by: Int64(new - old)) } }
        advance(published, now.published, last.published)
        advance(failures, now.failures, last.failures)
        advance(removed, now.removed, last.removed)
        advance(statesRead, now.statesRead, last.statesRead)
        advance(malformed, now.malformed, last.malformed)
        connected.set(Int64(now.connected ? 1 : 0))
        last = now
    }
}
