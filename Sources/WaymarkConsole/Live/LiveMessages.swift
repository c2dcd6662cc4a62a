import WaymarkJSON
import WaymarkCore

/// Reads the aggregator's device state and the gateways' status payloads (README, "MQTT topics
/// and payloads") through WaymarkJSON. Nil when a payload is not the object it should be.
enum LiveMessages {
    static func deviceState(_ payload: [UInt8], topicDevice: String) -> LiveVenue.Device? {
        payload.withUnsafeBufferPointer { bytes -> LiveVenue.Device? in
            guard let index = try? JSONObjectIndex(bytes) else { return nil }
            let id = index.string("device") ?? topicDevice
            guard id == topicDevice else { return nil }
            var device = LiveVenue.Device(id: id, currentRegion: index.string("current_region"),
                                          confidence: index.number("confidence"), proximity: nil, distanceM: nil,
                                          updatedAt: index.number("updated_at"))
            if let current = device.currentRegion, let regions = index.raw("regions") {
                for entry in objects(in: regions) where entry["region"] == .some(.string(current)) {
                    if case .string(let p)? = entry["proximity"] { device.proximity = p }
                    if case .number(let d)? = entry["distance_m"] { device.distanceM = d }
                }
            }
            return device
        }
    }

    static func gatewayStatus(_ payload: [UInt8], gateway: String, receivedAt: Double) -> LiveVenue.Gateway? {
        // The last will is the bare word `offline` in some set-ups; accept it too.
        let text = String(decoding: payload, as: UTF8.self)
        if text == "offline" || text == "online" {
            return LiveVenue.Gateway(id: gateway, state: text, receivedAt: receivedAt)
        }
        return payload.withUnsafeBufferPointer { bytes -> LiveVenue.Gateway? in
            guard let index = try? JSONObjectIndex(bytes), let state = index.string("state"),
                  state == "online" || state == "offline" else { return nil }
            if let named = index.string("gateway"), named != gateway { return nil }
            let t = index.number("t")
            return LiveVenue.Gateway(
                id: gateway, state: state, version: index.string("version"), boot: index.string("boot"),
                spoolDepth: index.number("spool_depth").map { Int($0) }, spoolDropped: index.number("spool_dropped").map { Int($0) },
                statusTime: t, receivedAt: receivedAt, clockOffsetS: t.map { receivedAt - $0 })
        }
    }

    /// An aggregator's status (`AggregatorStatusMessage`: `ServiceStatus`'s JSON or a bare word).
    static func aggregatorStatus(_ payload: [UInt8], key: String, receivedAt: Double) -> LiveVenue.Aggregator? {
        AggregatorStatusMessage.parse(payload).map {
            LiveVenue.Aggregator(key: key, state: $0.state, version: $0.version, shards: $0.shards, shardCount: $0.shardCount,
                                 statusTime: $0.t, receivedAt: receivedAt)
        }
    }

    enum Scalar: Equatable {
        case string(String)
        case number(Double)
        case other
    }

    /// The scalar members of each object in a JSON array (nested containers are skipped).
    static func objects(in array: UnsafeBufferPointer<UInt8>) -> [[String: Scalar]] {
        var reader = JSONReader(array)
        var out: [[String: Scalar]] = []
        do {
            var list = try reader.openArray()
            while try reader.next(in: &list) {
                reader.skipWhitespace()
                guard reader.peek() == UInt8(ascii: "{") else { try reader.skipValue(); continue }
                var object = try reader.openObject()
                var members: [String: Scalar] = [:]
                while try reader.next(in: &object) {
                    let key = try reader.readKey().value
                    reader.skipWhitespace()
                    let next = reader.peek() ?? 0
                    switch next {
                    case UInt8(ascii: "\""): members[key] = .string(try reader.readString().value)
                    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): members[key] = .number(try reader.readNumber())
                    default: try reader.skipValue(); members[key] = .other
                    }
                }
                out.append(members)
            }
        } catch {
            return out
        }
        return out
    }
}
