import WaymarkCore

/// The JSON of a ``SightingBatch`` on the wire and in the spool, written directly into bytes (a
/// batch per window is on the hot path of a busy gateway; `JSONEncoder` costs several times more).
/// Same keys as `SightingBatch`'s `Codable` form, so `JSONDecoder` reads it back (tested). Public for
/// the benchmarks, which measure the aggregator on exactly what the edge sends.
public enum BatchCoding {
    public static func encode(_ batch: SightingBatch) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(160 + batch.sightings.count * 200)
        out += #"{"v":"#.utf8
        number(batch.v, &out)
        out += #","gateway":"#.utf8
        string(batch.gateway, &out)
        out += #","boot":"#.utf8
        string(batch.boot, &out)
        out += #","seq":"#.utf8
        out += String(batch.seq).utf8
        out += #","start":"#.utf8
        number(batch.start, &out)
        out += #","end":"#.utf8
        number(batch.end, &out)
        out += #","sightings":["#.utf8
        for (i, e) in batch.sightings.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += #"{"device":"#.utf8
            string(e.device.rawValue, &out)
            out += #","count":"#.utf8
            number(e.count, &out)
            out += #","rssi_max":"#.utf8
            number(e.rssiMax, &out)
            out += #","rssi_mean":"#.utf8
            number(e.rssiMean, &out)
            out += #","rssi_last":"#.utf8
            number(e.rssiLast, &out)
            if let tx = e.tx {
                out += #","tx":"#.utf8
                number(tx, &out)
            }
            out += #","first":"#.utf8
            number(e.first, &out)
            out += #","last":"#.utf8
            number(e.last, &out)
            if let t = e.telemetry {
                out += #","telemetry":{"#.utf8
                var comma = false
                if let mv = t.batteryMV { out += #""battery_mv":"#.utf8; number(mv, &out); comma = true }
                if let c = t.temperatureC {
                    if comma { out.append(UInt8(ascii: ",")) }
                    out += #""temperature_c":"#.utf8
                    number(c, &out)
                }
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "}"))
        }
        out += "]}".utf8
        return out
    }

    private static func number(_ v: Int, _ out: inout [UInt8]) { out += String(v).utf8 }

    /// Integral values as integers (`-72`), others in Swift's shortest round-trip form.
    private static func number(_ v: Double, _ out: inout [UInt8]) {
        if v.isFinite, v == v.rounded(), abs(v) < 1e15 {
            out += String(Int64(v)).utf8
        } else if v.isFinite {
            out += v.description.utf8
        } else {
            out += "null".utf8   // never produced: RSSI and times are finite
        }
    }

    private static func string(_ s: String, _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): out += #"\""#.utf8
            case UInt8(ascii: "\\"): out += #"\\"#.utf8
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += #"\u00"#.utf8
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0xF)])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
