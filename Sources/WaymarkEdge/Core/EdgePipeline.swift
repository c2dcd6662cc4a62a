import WaymarkAdvertising
import WaymarkCore

/// Everything between the radio (or a replay) and the spool, without I/O: decode HCI events,
/// apply the tracking rules, aggregate per device per window. Not thread-safe; the agent owns it.
public struct EdgePipeline: Sendable {
    public let gateway: String
    public var filter: AdvertFilter
    public var windower: SightingWindower
    public private(set) var counters = EdgeCounters()

    public init(gateway: String, boot: String, window: Double, rules: TrackingRules, pseudonymSecret: String? = nil) {
        self.gateway = gateway
        self.filter = AdvertFilter(rules: rules, secret: pseudonymSecret)
        // Every window is sent, empty ones too: on a live radio (`tick`) a quiet gateway then says
        // so each window instead of making the aggregator wait for it. A replay closes windows on
        // its sightings' times only, so it sends what it heard as before.
        self.windower = SightingWindower(window: window, gateway: gateway, boot: boot, emptyWindows: true)
    }

    /// One raw HCI event (H4 or bare LE Meta) heard at `time`. Malformed events are counted by
    /// cause and skipped. Returns the batch of a window this event closed.
    public mutating func ingest(event bytes: UnsafeRawBufferPointer, time: Double) -> SightingBatch? {
        counters.hciEvents += 1
        let reports: [AdvertisingReport]
        do {
            reports = try HCIEventDecoder.decode(bytes)
        } catch {
            counters.malformedEvents[error.code, default: 0] += 1
            return nil
        }
        var closed: SightingBatch?
        for report in reports {
            counters.adverts += 1
            counters.decoded += 1
            if let batch = ingest(report: report, time: time) { closed = batch }
        }
        return closed
    }

    /// ``ingest(event:time:)`` for an array.
    public mutating func ingest(event bytes: [UInt8], time: Double) -> SightingBatch? {
        bytes.withUnsafeBytes { ingest(event: $0, time: time) }
    }

    /// One decoded advertising report (from a scanner that decodes itself).
    public mutating func ingest(report: AdvertisingReport, time: Double) -> SightingBatch? {
        switch filter.classify(report, time: time) {
        case .tracked(let id, let tx):
            counters.tracked += 1
            return count(windower.add(device: id, rssi: Double(report.rssi ?? 0), tx: tx, time: time))
        case .telemetry(let id, let t):
            counters.telemetry += 1
            return count(windower.attach(telemetry: t, to: id, time: time))
        case .dropped(let reason):
            counters.filtered[reason, default: 0] += 1
            return nil
        }
    }

    /// One sightings JSONL record; lines of other gateways are skipped and counted.
    public mutating func ingest(record: SightingRecord) -> SightingBatch? {
        counters.adverts += 1
        guard record.gateway == gateway else {
            counters.otherGateway += 1
            return nil
        }
        counters.decoded += 1
        guard filter.tracks(record.device) else {
            counters.filtered[.untracked, default: 0] += 1
            return nil
        }
        counters.tracked += 1
        return count(windower.add(device: record.device, rssi: record.rssi, tx: record.tx, time: record.time))
    }

    /// A replay line that could not be parsed.
    public mutating func malformedLine() { counters.malformedLines += 1 }

    /// The clock reached `now`: closes the open window when it is over.
    public mutating func tick(now: Double) -> SightingBatch? { count(windower.advance(to: now)) }

    /// Closes the open window now (shutdown, end of replay).
    public mutating func flush() -> SightingBatch? { count(windower.flush()) }

    private mutating func count(_ batch: SightingBatch?) -> SightingBatch? {
        if batch != nil { counters.batches += 1 }
        return batch
    }
}
