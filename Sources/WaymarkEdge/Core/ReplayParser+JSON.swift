import Foundation
import WaymarkCore
import WaymarkJSON

extension ReplayParser {
    /// One JSONL line: a sighting (`t`, `gateway`, `device`, `rssi`, optional `tx`) or a decoded
    /// capture line with the raw event in `hex` (and optional `t`). Other members may hold any
    /// JSON value; they are checked and ignored.
    static func parseJSONLine(_ text: Substring, line: Int) -> ReplayItem {
        func bad(_ why: String) -> ReplayItem { .malformed(line: line, reason: why) }
        var utf8 = String(text)
        guard let object = utf8.withUTF8({ try? JSONLineMembers($0) }) else { return bad("not a JSON object") }
        let time = object.t.flatMap(Self.time(from:))
        if let time, let problem = UnixSeconds.problem(time) { return bad(problem) }
        if let hex = object.hex {
            guard case .string(let text) = hex, let bytes = Hex.decode(text) else { return bad("'hex' is not a hex string") }
            return .hciEvent(bytes, time: time, line: line)
        }
        guard let time else { return bad("'t' is missing or not Unix seconds / an ISO-8601 time") }
        guard case .string(let gateway)? = object.gateway, !gateway.isEmpty else { return bad("'gateway' is missing") }
        guard case .string(let deviceText)? = object.device else { return bad("'device' is missing") }
        guard let device = DeviceID(deviceText) else {
            return bad("'device' is not a device id (ibeacon:…, eddystone:…, altbeacon:…, mac:…, anon:…)")
        }
        guard case .number(let rssi)? = object.rssi else { return bad("'rssi' is missing or not a number") }
        var tx: Double?
        if let raw = object.tx, raw != .null {
            guard case .number(let v) = raw else { return bad("'tx' is not a number") }
            tx = v
        }
        return .sighting(SightingRecord(time: time, gateway: gateway, device: device, rssi: rssi, tx: tx), line: line)
    }

    private static func time(from value: JSONLineMembers.Value) -> Double? {
        switch value {
        case .number(let n): return n
        case .string(let s):
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = f.date(from: s) { return d.timeIntervalSince1970 }
            f.formatOptions = [.withInternetDateTime]
            return f.date(from: s)?.timeIntervalSince1970
        case .null, .other: return nil
        }
    }
}

/// The members of a replay JSONL line that `ReplayParser` uses (of a key given twice, the last),
/// read with `JSONReader`.
private struct JSONLineMembers {
    enum Value: Equatable {
        case string(String), number(Double), null
        /// A boolean, array or object: no member the parser uses may be one.
        case other
    }

    var t: Value?, hex: Value?, gateway: Value?, device: Value?, rssi: Value?, tx: Value?

    init(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONError) {
        var reader = JSONReader(bytes)
        var object = try reader.openObject()
        while try reader.next(in: &object) {
            let key = try reader.readKey()
            if key.equals("t") { t = try Self.value(&reader) }
            else if key.equals("hex") { hex = try Self.value(&reader) }
            else if key.equals("gateway") { gateway = try Self.value(&reader) }
            else if key.equals("device") { device = try Self.value(&reader) }
            else if key.equals("rssi") { rssi = try Self.value(&reader) }
            else if key.equals("tx") { tx = try Self.value(&reader) }
            else { try reader.skipValue() }
        }
        try reader.expectEnd()
    }

    private static func value(_ reader: inout JSONReader) throws(JSONError) -> Value {
        switch reader.peek() {
        case 0x22: return .string(try reader.readString().value)
        case 0x6E:
            try reader.readNull()
            return .null
        case 0x74, 0x66, 0x7B, 0x5B:
            try reader.skipValue()
            return .other
        default: return .number(try reader.readNumber())
        }
    }
}
