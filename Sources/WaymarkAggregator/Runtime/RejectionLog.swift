import Logging
import WaymarkService

/// Logs each rejection reason at most once per interval, with how many were suppressed, so a
/// misbehaving gateway cannot flood the log (DESIGN.md §6: "logged once per cause").
struct RejectionLog {
    let interval: Double
    private var last: [RejectReason: Double] = [:]
    private var suppressed: [RejectReason: Int] = [:]

    init(interval: Double) { self.interval = interval }

    mutating func note(_ reason: RejectReason, gateway: String, topic: String, at now: Double, logger: Logger) {
        if let t = last[reason], now - t < interval {
            suppressed[reason, default: 0] += 1
            return
        }
        let more = suppressed[reason] ?? 0
        last[reason] = now
        suppressed[reason] = 0
        logger.warning("rejected a payload: \(Self.explain(reason))", metadata: [
            LogKey.reason: .string(reason.rawValue), LogKey.gateway: .string(gateway), LogKey.topic: .string(topic),
            "suppressed_since_last": .stringConvertible(more),
        ])
    }

    static func explain(_ r: RejectReason) -> String {
        switch r {
        case .malformed: "the payload is not a valid sighting batch / status JSON"
        case .oversize: "the payload is larger than ingest.max_payload_bytes"
        case .version: "unsupported schema version 'v' (upgrade the aggregator or the edge)"
        case .unknownGateway: "the topic's gateway is not in the site file (add it, or fix the edge's gateway id)"
        case .gatewayMismatch: "the payload's gateway differs from the gateway in its topic"
        case .badTimes: "window or sighting times are inconsistent"
        case .clockAbsurd: "the gateway's clock is implausible (not set, or far off); check NTP on the gateway"
        case .duplicate: "duplicate batch"
        case .outOfOrder: "a batch after a gap in the gateway's sequence; waiting for the gateway to resend the missing ones"
        case .outOfRange: "a number is not finite or outside its field's range (see docs/aggregator.md, \"Rejections\"); fix the sender"
        case .badText: "a string is not valid UTF-8, holds a control character, is empty or too long; fix the sender"
        case .badEnum: "a field holds a value outside its set (status state online/offline, scan on/off/error/replay)"
        case .shardMismatch: "the batch is for another shard layout: give the gateway's publish.shards the aggregators' shards.count (docs/scaling.md); its batches stay spooled until then"
        case .quarantined: "PostgreSQL refused the message's data; it is in the quarantine table (docs/aggregator.md)"
        }
    }
}
