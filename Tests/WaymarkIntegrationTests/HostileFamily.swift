import Foundation
import WaymarkAggregator
import WaymarkCore

/// Issue 20's hostile-input family: every field of a sighting batch and of a gateway status with
/// boundary, out-of-range, out-of-type and broken-text values, each with the rejection it must get.
/// Payloads are built as bytes (not with JSONEncoder), so that they can hold what no encoder
/// writes: invalid UTF-8, 1e300, escaped NULs.
struct HostileCase: Sendable {
    enum Kind: String, Sendable { case sightings, status }
    var name: String
    var kind: Kind
    var expected: RejectReason
    /// The members of the message (in order), values as raw JSON bytes.
    var members: [(String, [UInt8])]

    var payload: [UInt8] {
        var out = Array("{".utf8)
        for (i, (key, value)) in members.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += Array("\"\(key)\":".utf8) + value
        }
        return out + Array("}".utf8)
    }

    /// Rejected only after the batch's sequence number was taken (and acked): a resend is a duplicate.
    var settlesSequence: Bool { expected == .badTimes || expected == .clockAbsurd }
}

enum HostileFamily {
    static func json(_ s: String) -> [UInt8] { Array(s.utf8) }
    static func string(_ s: String) -> [UInt8] { Array("\"\(s)\"".utf8) }
    /// A JSON string whose bytes are `prefix` followed by `bytes` (e.g. invalid UTF-8).
    static func rawString(_ prefix: String, _ bytes: [UInt8]) -> [UInt8] { Array("\"\(prefix)".utf8) + bytes + Array("\"".utf8) }
    static let invalidUTF8: [[UInt8]] = [[0xFF], [0xC3, 0x28], [0xED, 0xA0, 0x80]]  // stray byte, bad continuation, surrogate

    static func time(_ t: Double) -> [UInt8] { json(String(format: "%.3f", t)) }

    /// A good sighting entry heard around `t`.
    static func entry(device: DeviceID, t: Double) -> [(String, [UInt8])] {
        [("device", string(device.rawValue)), ("count", json("2")), ("rssi_max", json("-60")), ("rssi_mean", json("-61.5")),
         ("rssi_last", json("-62")), ("tx", json("-59")), ("first", time(t - 0.5)), ("last", time(t)),
         ("telemetry", json(#"{"battery_mv":3000,"temperature_c":21.5}"#))]
    }

    /// A good batch's members: window `[t − 1, t]`, one sighting.
    static func batch(gateway: String, boot: String, seq: UInt64, t: Double, device: DeviceID) -> [(String, [UInt8])] {
        [("v", json("1")), ("gateway", string(gateway)), ("boot", string(boot)), ("seq", json(String(seq))),
         ("start", time(t - 1)), ("end", time(t)), ("sightings", object(list: [entry(device: device, t: t - 0.25)]))]
    }

    /// A good status's members at `t`.
    static func status(gateway: String, t: Double) -> [(String, [UInt8])] {
        [("state", string("online")), ("gateway", string(gateway)), ("version", string("1.4.2")), ("boot", string("b-1")),
         ("spool_depth", json("3")), ("spool_dropped", json("0")), ("scan", string("on")), ("t", time(t))]
    }

    static func object(_ members: [(String, [UInt8])]) -> [UInt8] {
        HostileCase(name: "", kind: .status, expected: .malformed, members: members).payload
    }

    static func object(list: [[(String, [UInt8])]]) -> [UInt8] {
        var out = Array("[".utf8)
        for (i, m) in list.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += object(m)
        }
        return out + Array("]".utf8)
    }

    static func replacing(_ members: [(String, [UInt8])], _ key: String, with value: [UInt8]) -> [(String, [UInt8])] {
        members.map { $0.0 == key ? ($0.0, value) : $0 }
    }

    /// Every case, for a message from `gateway` (its topic's gateway) at time `t`, batches with
    /// boot `boot` and sequence `seq`.
    static func cases(gateway: String, boot: String, seq: UInt64, t: Double, device: DeviceID) -> [HostileCase] {
        var out: [HostileCase] = []
        let good = batch(gateway: gateway, boot: boot, seq: seq, t: t, device: device)
        func batchCase(_ name: String, _ expected: RejectReason, _ members: [(String, [UInt8])]) {
            out.append(HostileCase(name: "batch \(name)", kind: .sightings, expected: expected, members: members))
        }
        func top(_ key: String, _ value: [UInt8], _ expected: RejectReason, _ label: String) {
            batchCase("\(key)=\(label)", expected, replacing(good, key, with: value))
        }
        func inEntry(_ key: String, _ value: [UInt8], _ expected: RejectReason, _ label: String) {
            let e = replacing(entry(device: device, t: t - 0.25), key, with: value)
            batchCase("sightings[0].\(key)=\(label)", expected, replacing(good, "sightings", with: object(list: [e])))
        }
        func telemetry(_ key: String, _ value: String, _ expected: RejectReason) {
            let tel = json("{\"\(key)\":\(value)}")
            let e = replacing(entry(device: device, t: t - 0.25), "telemetry", with: tel)
            batchCase("telemetry.\(key)=\(value)", expected, replacing(good, "sightings", with: object(list: [e])))
        }
        // Batch members.
        top("v", json("2"), .version, "2")
        for v in ["1.5", "1e300", "\"1\"", "null"] { top("v", json(v), .malformed, v) }
        top("gateway", string("gw-elsewhere"), .gatewayMismatch, "other")
        top("gateway", json("12"), .malformed, "12")
        for (i, bytes) in invalidUTF8.enumerated() {
            top("gateway", rawString(gateway, bytes), .badText, "invalid-utf8-\(i)")
            top("boot", rawString("b", bytes), .badText, "invalid-utf8-\(i)")  // issue 20: stored repaired before
        }
        top("boot", string(""), .badText, "empty")
        top("boot", string(String(repeating: "b", count: 129)), .badText, "129-bytes")
        top("boot", json(#""a\u0000b""#), .malformed, "escaped-NUL")
        top("boot", json("5"), .malformed, "5")
        for v in ["-1", "1.5", "1e16", "1e300", "-1e300"] { top("seq", json(v), .outOfRange, v) }
        top("seq", json("\"7\""), .malformed, "\"7\"")
        for v in ["1e300", "-1e300", "0"] { top("start", json(v), .badTimes, v) }
        top("end", json("1e300"), .badTimes, "1e300")
        top("start", json("null"), .malformed, "null")
        top("sightings", json("{}"), .malformed, "{}")
        top("sightings", json("[1]"), .malformed, "[1]")
        // Whole-batch clocks that no correction explains.
        for (label, shifted) in [("1970", 1_000.0), ("year-5138", 1e11), ("1e20", 1e20)] {
            batchCase("all times \(label)", .clockAbsurd, batch(gateway: gateway, boot: boot, seq: seq, t: shifted, device: device))
        }
        // Sighting entry members.
        inEntry("device", string("not-a-device"), .malformed, "not-a-device")
        inEntry("device", rawString("mac:aa-bb-cc-dd-ee-f", [0xFF]), .badText, "invalid-utf8")
        inEntry("device", json("5"), .malformed, "5")
        inEntry("device", string("anon:" + String(repeating: "ab", count: 2000)), .badText, "anon-4000-hex")  // beyond an index row
        for v in ["0", "-1", "1.5", "3e9", "1e300"] { inEntry("count", json(v), .outOfRange, v) }
        inEntry("count", json("\"2\""), .malformed, "\"2\"")
        for key in ["rssi_max", "rssi_mean", "rssi_last", "tx"] {
            // 1e300: issue 20 (the raw sightings' real column refused it); 1e39: beyond float4.
            for v in ["1e300", "-1e300", "1e39", "128", "-129"] { inEntry(key, json(v), .outOfRange, v) }
            inEntry(key, json("\"-60\""), .malformed, "\"-60\"")
        }
        for v in ["1e300", "-1"] { inEntry("first", json(v), .badTimes, v) }
        inEntry("last", json("1e300"), .badTimes, "1e300")
        for v in ["-1", "65536", "1.5", "1e300"] { telemetry("battery_mv", v, .outOfRange) }
        for v in ["128.5", "-300", "1e300"] { telemetry("temperature_c", v, .outOfRange) }
        telemetry("battery_mv", "\"3000\"", .malformed)

        // Status members.
        let okStatus = status(gateway: gateway, t: t)
        func statusCase(_ key: String, _ value: [UInt8], _ expected: RejectReason, _ label: String) {
            out.append(HostileCase(name: "status \(key)=\(label)", kind: .status, expected: expected,
                                   members: replacing(okStatus, key, with: value)))
        }
        statusCase("state", string("sleeping"), .badEnum, "sleeping")
        statusCase("state", json("1"), .malformed, "1")
        statusCase("state", json("null"), .malformed, "null")
        statusCase("gateway", string("gw-elsewhere"), .gatewayMismatch, "other")
        statusCase("gateway", string(""), .badText, "empty")
        for key in ["version", "boot"] {
            statusCase(key, json(#""1.0\u0000""#), .badText, "escaped-NUL")  // issue 20 (version)
            statusCase(key, json(#""\u0007""#), .badText, "BEL")
            statusCase(key, string(String(repeating: "v", count: 129)), .badText, "129-bytes")
            statusCase(key, rawString("1.0", [0xFF]), .badText, "invalid-utf8")
            statusCase(key, rawString("1.0", [0x00]), .malformed, "raw-NUL")
            statusCase(key, json("5"), .malformed, "5")
        }
        for v in ["3e9", "2147483648", "-1", "1.5", "1e300"] { statusCase("spool_depth", json(v), .outOfRange, v) }  // 3e9: issue 20
        for v in ["1e19", "-5", "0.5"] { statusCase("spool_dropped", json(v), .outOfRange, v) }
        statusCase("spool_depth", json("\"3\""), .malformed, "\"3\"")
        statusCase("scan", string("bogus"), .badEnum, "bogus")
        statusCase("scan", json("3"), .malformed, "3")
        for v in ["1e20", "-1", "4102444801", "1e300", "-1e300"] { statusCase("t", json(v), .outOfRange, v) }  // 1e20: issue 20
        statusCase("t", json("\"now\""), .malformed, "\"now\"")
        return out
    }
}
