/// Why a payload was not used. The raw values are the `reason` label of
/// `waymark_aggregator_rejected_total` and the `reason` column of `gateway_rejections`.
public enum RejectReason: String, Sendable, CaseIterable, Codable {
    /// Not JSON, or a required member missing or of the wrong type.
    case malformed
    /// Larger than `ingest.max_payload_bytes`.
    case oversize
    /// `v` is not a schema version this aggregator understands.
    case version
    /// The topic's gateway level is not a gateway of the site file.
    case unknownGateway = "unknown_gateway"
    /// The payload's `gateway` differs from the topic's gateway level.
    case gatewayMismatch = "gateway_mismatch"
    /// Window or sighting times inconsistent (end before start, sightings outside the window,
    /// non-finite numbers).
    case badTimes = "bad_times"
    /// Times that no clock correction can explain (before 2020, far in the future, or older than
    /// `clock.max_age_s`).
    case clockAbsurd = "clock_absurd"
    /// A (gateway, boot, seq) at or below what was already processed.
    case duplicate
    /// A batch after a gap in its boot's sequence that could not be parked (the memory for parked
    /// batches is full): refused (not acked) so that the gateway resends it later. Batches after a
    /// gap are normally parked and the gateway asked to resend the missing ones
    /// (`AggregatorCore.park`); once the gap is older than `ingest.gap_timeout_s` it counts as lost.
    case outOfOrder = "out_of_order"
    /// A number the store cannot hold or that no gateway can mean: not finite, not an integer where
    /// one is needed, or outside the field's range (`FieldRules`: RSSI and tx −128…127 dBm,
    /// spool_depth 0…2³¹−1, a status time outside 1970…2100, …).
    case outOfRange = "out_of_range"
    /// A string that is not valid UTF-8, holds a control character (NUL included), is empty where a
    /// value is required, or is longer than `FieldRules.maxTextBytes`.
    case badText = "bad_text"
    /// A value outside its field's set (a status `state` other than online/offline, a `scan` other
    /// than on/off/error/replay).
    case badEnum = "bad_enum"
    /// A batch of the wrong shard layout (docs/scaling.md §1): on a topic with a shard level while
    /// this aggregator runs unsharded, without one while it runs sharded, on a shard it does not own,
    /// or with devices that belong to other shards (the gateway's `publish.shards` differs from the
    /// aggregator's `shards.count`). Refused, not acked: the batches stay spooled at the gateway
    /// until the counts agree.
    case shardMismatch = "shard_mismatch"
    /// Passed every check above but PostgreSQL refused it for its data (SQLSTATE class 22 or 23):
    /// stored in the `quarantine` table with its raw payload and the error, and acked.
    case quarantined
}

/// Counts per reason, for metrics and the once-per-interval log line.
public struct RejectCounts: Sendable, Equatable {
    public private(set) var byReason: [RejectReason: Int] = [:]
    public init() {}
    public mutating func add(_ reason: RejectReason, _ n: Int = 1) { byReason[reason, default: 0] += n }
    public subscript(reason: RejectReason) -> Int { byReason[reason] ?? 0 }
    public var total: Int { byReason.values.reduce(0, +) }
}
