import Foundation
import WaymarkCore

extension ReplayParser {
    /// One JSONL line: a sighting (`t`, `gateway`, `device`, `rssi`, optional `tx`) or a decoded
    /// capture line with the raw event in `hex` (and optional `t`).
    static func parseJSONLine(_ text: Substring, line: Int) -> ReplayItem {
        func bad(_ why: String) -> ReplayItem { .malformed(line: line, reason: why) }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            return bad("not a JSON object")
        }
        let time = object["t"].flatMap(Self.time(from:))
        if let hex = object["hex"] {
            guard let text = hex as? String, let bytes = Hex.decode(text) else { return bad("'hex' is not a hex string") }
            return .hciEvent(bytes, time: time, line: line)
        }
        guard let time else { return bad("'t' is missing or not Unix seconds / an ISO-8601 time") }
        guard let gateway = object["gateway"] as? String, !gateway.isEmpty else { return bad("'gateway' is missing") }
        guard let deviceText = object["device"] as? String else { return bad("'device' is missing") }
        guard let device = DeviceID(deviceText) else {
            return bad("'device' is not a device id (ibeacon:…, eddystone:…, altbeacon:…, mac:…, anon:…)")
        }
        guard let rssi = (object["rssi"] as? NSNumber)?.doubleValue, rssi.isFinite else { return bad("'rssi' is missing or not a number") }
        var tx: Double?
        if let raw = object["tx"], !(raw is NSNull) {
            guard let v = (raw as? NSNumber)?.doubleValue, v.isFinite else { return bad("'tx' is not a number") }
            tx = v
        }
        return .sighting(SightingRecord(time: time, gateway: gateway, device: device, rssi: rssi, tx: tx), line: line)
    }

    private static func time(from value: Any) -> Double? {
        if let n = value as? NSNumber { return n.doubleValue }
        if let s = value as? String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = f.date(from: s) { return d.timeIntervalSince1970 }
            f.formatOptions = [.withInternetDateTime]
            return f.date(from: s)?.timeIntervalSince1970
        }
        return nil
    }
}
