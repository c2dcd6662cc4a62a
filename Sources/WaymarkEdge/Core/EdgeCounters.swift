/// What the pipeline has seen since start, for metrics, status and tests. Plain counters; the
/// agent copies them to Prometheus on each tick.
public struct EdgeCounters: Sendable, Equatable {
    /// HCI events received (each may carry several reports).
    public var hciEvents = 0
    /// Advertising reports (and sightings JSONL lines) received.
    public var adverts = 0
    /// Reports decoded from well-formed events.
    public var decoded = 0
    /// Malformed HCI events by decoder error code (`truncated-report`, …).
    public var malformedEvents: [String: Int] = [:]
    /// Replay lines that could not be parsed.
    public var malformedLines = 0
    /// Reports dropped by the tracking rules, by reason.
    public var filtered: [AdvertFilter.DropReason: Int] = [:]
    /// Sightings JSONL lines of another gateway (skipped).
    public var otherGateway = 0
    /// Reports counted into a window.
    public var tracked = 0
    /// Telemetry frames attached to a tracked device.
    public var telemetry = 0
    /// Batches produced by the windower.
    public var batches = 0

    public init() {}

    public var malformedEventTotal: Int { malformedEvents.values.reduce(0, +) }
    public var filteredTotal: Int { filtered.values.reduce(0, +) }
}
